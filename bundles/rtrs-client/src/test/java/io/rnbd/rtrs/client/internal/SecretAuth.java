package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.AuthException;
import io.rnbd.rtrs.api.AuthExchange;
import io.rnbd.rtrs.api.Authenticator;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/** A one-message test authenticator: the host sends "host:secret", the target compares. */
final class SecretAuth implements Authenticator {
    private final String secret;
    final AtomicInteger responds = new AtomicInteger();

    SecretAuth(String secret) {
        this.secret = secret;
    }

    @Override
    public String method() {
        return "test";
    }

    @Override
    public AuthExchange initiate(String hostId) {
        return new AuthExchange() {
            boolean sent;

            @Override
            public byte[] step(byte[] peer) {
                if (sent) {
                    return null;
                }
                sent = true;
                return (hostId + ":" + secret).getBytes(StandardCharsets.UTF_8);
            }

            @Override
            public boolean done() {
                return sent;
            }

            @Override
            public String peerId() {
                return "";
            }
        };
    }

    @Override
    public AuthExchange respond() {
        responds.incrementAndGet();
        return new AuthExchange() {
            String peer;

            @Override
            public byte[] step(byte[] msg) throws AuthException {
                String s = new String(msg, StandardCharsets.UTF_8);
                int c = s.lastIndexOf(':');
                if (c < 0 || !s.substring(c + 1).equals(secret)) {
                    throw new AuthException(Errno.EKEYREJECTED, "wrong key");
                }
                peer = s.substring(0, c);
                return null;
            }

            @Override
            public boolean done() {
                return peer != null;
            }

            @Override
            public String peerId() {
                return peer;
            }
        };
    }
}
