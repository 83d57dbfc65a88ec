dnl SPDX-License-Identifier: GPL-2.0-or-later
dnl NBIO_CC_TRY_FLAGS(VAR, FLAGS): append to VAR each flag the compiler
dnl accepts without a warning.
AC_DEFUN([NBIO_CC_TRY_FLAGS], [
	for nbio_flag in $2; do
		AC_MSG_CHECKING([whether $CC accepts $nbio_flag])
		nbio_save_CFLAGS=$CFLAGS
		CFLAGS="$CFLAGS -Werror $nbio_flag"
		AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
			[$1="$$1 $nbio_flag"; AC_MSG_RESULT([yes])],
			[AC_MSG_RESULT([no])])
		CFLAGS=$nbio_save_CFLAGS
	done
])
