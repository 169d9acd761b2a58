dnl SPDX-License-Identifier: LGPL-2.1-or-later
dnl XDEV_COMPILER_FLAGS: the one place that decides warning and hardening flags.
dnl Sets XDEV_CFLAGS and XDEV_LDFLAGS; --enable-werror adds -Werror.
AC_DEFUN([XDEV_TRY_CFLAG], [
  AC_MSG_CHECKING([whether $CC accepts $1])
  xdev_save_CFLAGS="$CFLAGS"
  CFLAGS="$CFLAGS -Werror $1"
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
    [AC_MSG_RESULT([yes]); XDEV_CFLAGS="$XDEV_CFLAGS $1"],
    [AC_MSG_RESULT([no])])
  CFLAGS="$xdev_save_CFLAGS"
])
AC_DEFUN([XDEV_TRY_LDFLAG], [
  AC_MSG_CHECKING([whether the linker accepts $1])
  xdev_save_LDFLAGS="$LDFLAGS"
  LDFLAGS="$LDFLAGS $1"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])],
    [AC_MSG_RESULT([yes]); XDEV_LDFLAGS="$XDEV_LDFLAGS $1"],
    [AC_MSG_RESULT([no])])
  LDFLAGS="$xdev_save_LDFLAGS"
])
AC_DEFUN([XDEV_COMPILER_FLAGS], [
  XDEV_CFLAGS=""
  XDEV_LDFLAGS=""
  for flag in -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
              -Wmissing-prototypes -Wpointer-arith -Wundef -Wvla \
              -Wnull-dereference -Wimplicit-fallthrough -Wno-unused-parameter \
              -fno-strict-aliasing -fstack-protector-strong \
              -fvisibility=hidden; do
    XDEV_TRY_CFLAG([$flag])
  done
  for flag in -Wl,-z,relro -Wl,-z,now -Wl,--as-needed; do
    XDEV_TRY_LDFLAG([$flag])
  done
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors])],
    [], [enable_werror=no])
  AS_IF([test "x$enable_werror" = xyes], [XDEV_CFLAGS="$XDEV_CFLAGS -Werror"])
  AC_SUBST([XDEV_CFLAGS])
  AC_SUBST([XDEV_LDFLAGS])
])
