package io.rnbd.rtrs.command;

import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/** A BundleContext offering at most one service, counting gets and ungets. */
public final class FakeContext {
    final AtomicInteger gets = new AtomicInteger();
    final AtomicInteger ungets = new AtomicInteger();
    public final BundleContext context;

    /** @param service the object registered under {@code className}, or null for none */
    public FakeContext(String className, Object service) {
        ServiceReference<?> ref = (ServiceReference<?>) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {ServiceReference.class}, (p, m, a) -> {
                    throw new UnsupportedOperationException(m.getName());
                });
        context = (BundleContext) Proxy.newProxyInstance(BundleContext.class.getClassLoader(),
                new Class<?>[] {BundleContext.class}, (p, m, a) -> switch (m.getName()) {
                    case "getServiceReference" -> service != null && className.equals(a[0]) ? ref : null;
                    case "getService" -> {
                        gets.incrementAndGet();
                        yield service;
                    }
                    case "ungetService" -> {
                        ungets.incrementAndGet();
                        yield true;
                    }
                    case "toString" -> "FakeContext";
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }
}
