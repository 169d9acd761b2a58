/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Config files of one broken line each and what is said of it after
 * "FILE:1: ", for the tests that read them through a program: the PAM
 * module (test-pam), which then grants nothing, and "xdevices check"
 * (test-helper), which names them. */
#pragma once

#include <stddef.h>

struct conf_line {
        const char *text; /* the whole file */
        const char *reason;
};

static const struct conf_line conf_bad_lines[] = {
        { "mode = sideways\n", "bad value \"sideways\" for \"mode\" (acl, chown)" },
        { "mode = ACL\n", "bad value \"ACL\" for \"mode\" (acl, chown)" },
        { "mode =\n", "bad value \"\" for \"mode\" (acl, chown)" },
        { "mode acl\n", "\"mode acl\": missing \"=\" (write \"mode = acl\")" },
        { "mode = acl\r\n", "control character in line" },
        { "vt = x\n", "bad value \"x\" for \"vt\" (off, r, rw)" },
        { "drm = rwx\n", "bad value \"rwx\" for \"drm\" (off, r, rw)" },
        { "drm = r = w\n", "bad value \"r = w\" for \"drm\" (off, r, rw)" },
        { "drm = rw # read and write\n",
          "bad value \"rw # read and write\" for \"drm\" (off, r, rw); a comment must be on a "
          "line of its own, not after a value" },
        { "input = yes\n", "bad value \"yes\" for \"input\" (off, r, rw)" },
        { "console = on\n", "bad value \"on\" for \"console\" (off, r, rw)" },
        { "devices = sysfs\n", "bad value \"sysfs\" for \"devices\" (auto, udev, glob)" },
        { "glob = input:/etc/*\n",
          "bad value \"input:/etc/*\" for \"glob\" (CLASS:/dev/PATTERN, CLASS one of vt, drm, "
          "input, console)" },
        { "glob = input:/dev/../etc/shadow\n",
          "bad value \"input:/dev/../etc/shadow\" for \"glob\" (CLASS:/dev/PATTERN, CLASS one of "
          "vt, drm, input, console)" },
        { "glob = /dev/dri/card*\n",
          "bad value \"/dev/dri/card*\" for \"glob\" (CLASS:/dev/PATTERN, CLASS one of vt, drm, "
          "input, console)" },
        { "glob = gpu:/dev/dri/card*\n",
          "bad value \"gpu:/dev/dri/card*\" for \"glob\" (CLASS:/dev/PATTERN, CLASS one of vt, "
          "drm, input, console)" },
        { "glob = drm:dev/dri/card*\n",
          "bad value \"drm:dev/dri/card*\" for \"glob\" (CLASS:/dev/PATTERN, CLASS one of vt, "
          "drm, input, console)" },
        { "deny_services = -x\n",
          "bad value \"-x\" for \"deny_services\" (PAM service names, separated by commas)" },
        { "services = lo gin\n",
          "bad value \"lo gin\" for \"services\" (PAM service names, separated by commas)" },
        { "services = login, s u\n",
          "bad value \"login, s u\" for \"services\" (PAM service names, separated by commas)" },
        { "deny_services = a b\n",
          "bad value \"a b\" for \"deny_services\" (PAM service names, separated by commas)" },
        { "logind = maybe\n", "bad value \"maybe\" for \"logind\" (standdown, ignore)" },
        { "lingering = nuke\n",
          "bad value \"nuke\" for \"lingering\" (revoke, kill, warn, kill-user)" },
        { "linger_grace = 1x\n",
          "bad value \"1x\" for \"linger_grace\" (milliseconds, 0 to 60000)" },
        { "linger_grace = 60001\n",
          "bad value \"60001\" for \"linger_grace\" (milliseconds, 0 to 60000)" },
        { "linger_grace = -1\n",
          "bad value \"-1\" for \"linger_grace\" (milliseconds, 0 to 60000)" },
        { "linger_scan_budget = 1023\n",
          "bad value \"1023\" for \"linger_scan_budget\" (a number, 1024 to 1048576)" },
        { "linger_scan_budget = 1048577\n",
          "bad value \"1048577\" for \"linger_scan_budget\" (a number, 1024 to 1048576)" },
        { "debug = maybe\n", "bad value \"maybe\" for \"debug\" (yes, no)" },
        { "runtime_dir = 2\n", "bad value \"2\" for \"runtime_dir\" (yes, no)" },
        { "system_uid_max = 65534\n",
          "bad value \"65534\" for \"system_uid_max\" (auto, or a uid from 0 to 65533)" },
        { "system_uid_max = Auto\n",
          "bad value \"Auto\" for \"system_uid_max\" (auto, or a uid from 0 to 65533)" },
};
#define CONF_N_BAD_LINES (sizeof conf_bad_lines / sizeof conf_bad_lines[0])
