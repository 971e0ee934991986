package io.rnbd.rdma.soft.internal;

import java.nio.ByteBuffer;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;

/**
 * Where a soft device's rkeys come from: 32 random bits each from a CSPRNG (the JDK's
 * {@code DRBG}, seeded once from the operating system when the device opens), drawn 256 keys
 * at a time so a key costs a few nanoseconds. Hardware puts 8 random-ish bits in each key
 * (the rest is a table index a peer can guess); here every bit is random, so knowing any
 * number of keys — one's own, or earlier keys of the same region — tells nothing about
 * another: guessing one live key among {@code n} takes about {@code 2^32 / n} tries, and
 * every wrong try costs the guesser its connection (a remote access error).
 *
 * <p>The device adds the rules randomness alone does not give: a key is never 0, never one
 * that is live on the device, and never the key the region had just before (so a key that
 * was invalidated is refused however the region is registered again). That a region gets
 * back, by chance, a key it had long ago is harmless: its keys only ever went to the peers
 * it was handed to, who hold its current key anyway whenever it is valid, and soft region
 * addresses are never reused, so an old (address, key) pair can reach no other region.
 */
final class RkeySource {
    private static final int BATCH = 256;
    private final SecureRandom random;
    private final ByteBuffer batch = ByteBuffer.allocate(BATCH * Integer.BYTES);

    RkeySource() {
        this(drbg());
    }

    RkeySource(SecureRandom random) {
        this.random = random;
        batch.position(batch.limit());
    }

    private static SecureRandom drbg() {
        try {
            return SecureRandom.getInstance("DRBG");
        } catch (NoSuchAlgorithmException e) {
            return new SecureRandom();
        }
    }

    /** A random non-zero key. */
    synchronized int next() {
        while (true) {
            if (!batch.hasRemaining()) {
                random.nextBytes(batch.array());
                batch.clear();
            }
            int k = batch.getInt();
            if (k != 0) {
                return k;
            }
        }
    }
}
