package io.rnbd.rnbd.backend.file.internal;

/**
 * The project's JNI library librnbd-file.so (src/main/c/file_native.c): fallocate(2), which
 * Java's FileChannel lacks, on a descriptor of its own per device. Without the library (a
 * build machine without gcc or the kernel's UAPI headers) trim and write-zeroes write zeros;
 * {@link #UNAVAILABLE} says why. Every call returns 0 (or a descriptor), or -errno.
 */
final class FileNative {
    static final String LIBRARY = "rnbd-file";
    /** Why the library is not there, or null when it loaded. */
    static final String UNAVAILABLE = load();

    private FileNative() {
    }

    private static String load() {
        try {
            System.loadLibrary(LIBRARY);
            return null;
        } catch (UnsatisfiedLinkError e) {
            return "lib" + LIBRARY + ".so is not in this build (it needs gcc and linux-libc-dev): " + e.getMessage();
        }
    }

    static native int open(String path, boolean readOnly);

    static native int close(int fd);

    /** FALLOC_FL_ZERO_RANGE | KEEP_SIZE: zeroed, still allocated. */
    static native int zeroRange(int fd, long offset, long length);

    /** FALLOC_FL_PUNCH_HOLE | KEEP_SIZE: deallocated, reads as zeros. */
    static native int punchHole(int fd, long offset, long length);

    /** KEEP_SIZE alone: allocated, contents as they were. */
    static native int allocate(int fd, long offset, long length);
}
