package io.rnbd.nbd.gateway.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * NBD_OPT_STARTTLS on the gateway, as nbdkit's {@code --tls=off|on|require}: the mode and the
 * server's X.509 identity. TLS-PSK (nbdkit's {@code --tls-psk}) is not offered: JSSE, the JDK's
 * TLS, implements no PSK key exchange (neither TLS 1.2's PSK cipher suites nor TLS 1.3 external
 * PSKs), so a PSK file is refused at configuration time rather than silently ignored.
 *
 * @param mode       off: STARTTLS unsupported; on: offered, not required; require: every option
 *                   but STARTTLS and ABORT is refused until TLS is up
 * @param context    the server's TLS context (null when off)
 * @param verifyPeer clients must present a certificate signed by the configured CA
 */
public record TlsPolicy(Mode mode, SSLContext context, boolean verifyPeer) {
    public enum Mode { OFF, ON, REQUIRE }

    public static final TlsPolicy OFF = new TlsPolicy(Mode.OFF, null, false);
    /** nbdkit negotiates TLS 1.2 and 1.3 through GnuTLS; older versions are broken. */
    static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    public TlsPolicy {
        if (mode == null) {
            throw new IllegalArgumentException("TLS mode missing");
        }
        if (mode != Mode.OFF && context == null) {
            throw new IllegalArgumentException("tls=" + mode.name().toLowerCase(Locale.ROOT)
                    + " needs a server certificate (tls.certificates or tls.keystore)");
        }
    }

    public boolean offered() {
        return mode != Mode.OFF;
    }

    public boolean required() {
        return mode == Mode.REQUIRE;
    }

    public static Mode parseMode(String s) {
        String v = s == null ? "" : s.trim().toLowerCase(Locale.ROOT);
        switch (v) {
            case "": case "off": case "false": case "no": return Mode.OFF;
            case "on": case "true": case "yes": return Mode.ON;
            case "require": case "required": return Mode.REQUIRE;
            default: throw new IllegalArgumentException("tls must be off, on or require, not '" + s + "'");
        }
    }

    /**
     * The policy from the gateway's configuration.
     *
     * @param certificates nbdkit's {@code --tls-certificates} directory: {@code server-cert.pem}
     *                     (the chain), {@code server-key.pem} (PKCS#8), {@code ca-cert.pem} (for
     *                     verifyPeer); or null
     * @param keystore     a PKCS#12 (or JKS) key store holding the server's key and chain, or null;
     *                     its trusted certificates are the CA for verifyPeer
     * @param psk          nbdkit's {@code --tls-psk} file, or null: refused, see the class comment
     */
    public static TlsPolicy load(Mode mode, Path certificates, Path keystore, char[] password, Path psk,
                                 boolean verifyPeer) throws IOException, GeneralSecurityException {
        if (psk != null) {
            throw new IllegalArgumentException("tls.psk (" + psk + ") is not supported: Java's TLS (JSSE) has no"
                    + " TLS-PSK key exchange; use X.509 (tls.certificates or tls.keystore)");
        }
        if (mode == Mode.OFF) {
            return OFF;
        }
        if ((certificates == null) == (keystore == null)) {
            throw new IllegalArgumentException("tls=" + mode.name().toLowerCase(Locale.ROOT)
                    + " needs exactly one of tls.certificates (a directory of PEM files) and tls.keystore");
        }
        KeyStore keys;
        KeyStore trust;
        char[] pw = password == null ? new char[0] : password;
        if (certificates != null) {
            List<Certificate> chain = readCertificates(certificates.resolve("server-cert.pem"));
            PrivateKey key = readPkcs8(certificates.resolve("server-key.pem"));
            keys = KeyStore.getInstance("PKCS12");
            keys.load(null, null);
            keys.setKeyEntry("server", key, pw, chain.toArray(new Certificate[0]));
            trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            if (verifyPeer) {
                int i = 0;
                for (Certificate c : readCertificates(certificates.resolve("ca-cert.pem"))) {
                    trust.setCertificateEntry("ca" + i++, c);
                }
            }
        } else {
            keys = KeyStore.getInstance(keystore.toString().endsWith(".jks") ? "JKS" : "PKCS12");
            try (InputStream in = Files.newInputStream(keystore)) {
                keys.load(in, pw);
            }
            trust = keys;
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, pw);
        TrustManagerFactory tmf = null;
        if (verifyPeer) {
            tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
        }
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), tmf == null ? null : tmf.getTrustManagers(), null);
        return new TlsPolicy(mode, ctx, verifyPeer);
    }

    private static List<Certificate> readCertificates(Path p) throws IOException, GeneralSecurityException {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        List<Certificate> out = new ArrayList<>();
        try (InputStream in = Files.newInputStream(p)) {
            out.addAll(cf.generateCertificates(in));
        }
        if (out.isEmpty()) {
            throw new GeneralSecurityException("no certificate in " + p);
        }
        return out;
    }

    private static final Pattern PKCS8 = Pattern.compile(
            "-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");

    /** Only unencrypted PKCS#8: the JDK reads no other PEM key format without extra libraries. */
    private static PrivateKey readPkcs8(Path p) throws IOException, GeneralSecurityException {
        String pem = Files.readString(p, StandardCharsets.US_ASCII);
        Matcher m = PKCS8.matcher(pem);
        if (!m.find()) {
            throw new GeneralSecurityException(p + " holds no unencrypted PKCS#8 key (\"BEGIN PRIVATE KEY\");"
                    + " convert it with: openssl pkcs8 -topk8 -nocrypt -in KEY -out " + p.getFileName());
        }
        byte[] der = Base64.getMimeDecoder().decode(m.group(1));
        GeneralSecurityException last = null;
        for (String alg : new String[] {"RSA", "EC", "Ed25519", "Ed448"}) {
            try {
                return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                last = e;
            }
        }
        throw new GeneralSecurityException("unsupported key algorithm in " + p, last);
    }
}
