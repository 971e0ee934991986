package io.rnbd.rtrs.command;

import io.rnbd.rtrs.command.internal.chap.ChapKeyStore;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * Finds the chap bundle's ChapKeyAdmin service by its class name, for one command.
 *
 * <p>The chap API package is imported optionally. Karaf's command extender loads every class
 * of the bundle and reads the fields of each command, so a command with a field of a chap type
 * would silently vanish without the chap bundle, and a DS component referencing it would sit
 * unsatisfied. Looking the service up by name when a key command runs avoids both; only
 * {@link ChapKeyStore} names chap types, and it is loaded only once the service exists.
 */
public final class AuthKeyStores {
    static final String CHAP_KEY_ADMIN = "io.rnbd.rtrs.auth.chap.api.ChapKeyAdmin";
    static final String NOT_INSTALLED = "the chap authentication bundle is not installed";

    private AuthKeyStores() {
    }

    /** A store held for the duration of a command; closing releases the service. */
    public interface Held extends AutoCloseable {
        AuthKeyStore store();

        @Override
        void close();
    }

    /**
     * @param given a store set by a test, used as is
     * @throws IllegalStateException when there is no chap key admin, or it cannot be used
     */
    public static Held open(BundleContext ctx, AuthKeyStore given) {
        if (given != null) {
            return held(given, () -> {
            });
        }
        ServiceReference<?> ref = ctx == null ? null : ctx.getServiceReference(CHAP_KEY_ADMIN);
        Object service = ref == null ? null : ctx.getService(ref);
        if (service == null) {
            throw new IllegalStateException(NOT_INSTALLED);
        }
        try {
            return held(ChapKeyStore.of(service), () -> ctx.ungetService(ref));
        } catch (LinkageError | ClassCastException e) {
            ctx.ungetService(ref);
            // the optional import is wired at resolve time only
            throw new IllegalStateException("the chap authentication bundle was installed after rtrs-command; "
                    + "run bundle:refresh rtrs-command");
        }
    }

    private static Held held(AuthKeyStore store, Runnable release) {
        return new Held() {
            @Override
            public AuthKeyStore store() {
                return store;
            }

            @Override
            public void close() {
                release.run();
            }
        };
    }
}
