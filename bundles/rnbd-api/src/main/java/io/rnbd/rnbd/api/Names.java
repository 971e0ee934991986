package io.rnbd.rnbd.api;

import io.rnbd.common.Errno;

/**
 * The names an operator gives devices, sessions and exports, checked once where the admin
 * services take them: they become service properties, LDAP filter values, file names and
 * table cells, so what may be in them is fixed here.
 *
 * @since 1.11
 */
public final class Names {
    private Names() {
    }

    /** Device and session names: letters, digits and {@code . _ : @ -}, 1 to 254. */
    public static String require(String what, String name) throws BlockIoException {
        if (name == null || !name.matches("[A-Za-z0-9._:@-]{1,254}")) {
            throw new BlockIoException(Errno.EINVAL, what + " '" + name + "' is not a valid name "
                    + "(letters, digits and . _ : @ -, at most 254)");
        }
        return name;
    }

    /** Export names may be paths, as the kernel's device_path (/dev/ram0, pool/vol1). */
    public static String requireExport(String what, String name) throws BlockIoException {
        if (name == null || !name.matches("[A-Za-z0-9._:@/-]{1,254}")) {
            throw new BlockIoException(Errno.EINVAL, what + " '" + name + "' is not a valid name "
                    + "(letters, digits and . _ : @ / -, at most 254)");
        }
        return name;
    }
}
