package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.impl.NatCmaIdPrivate;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaException;
import java.io.File;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;

/**
 * Run in a child JVM by {@link CmNativeBindingTest}, with class loaders laid out as
 * Karaf lays out bundles: DiSNI (and the library it loads) in one loader, the provider in
 * another that delegates DiSNI's packages to the first. Prints what it finds, one fact a line.
 */
public final class CmNativeProbe {
    private CmNativeProbe() {
    }

    public static void main(String[] args) throws Exception {
        List<URL> disni = new ArrayList<>();
        List<URL> provider = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String name = new File(e).getName();
            URL u = new File(e).toURI().toURL();
            if (name.startsWith("disni-") || name.startsWith("slf4j-")) {
                disni.add(u);
            } else {
                provider.add(u);
            }
        }
        ClassLoader platform = ClassLoader.getPlatformClassLoader();
        try (URLClassLoader a = new URLClassLoader(disni.toArray(new URL[0]), platform);
             URLClassLoader b = new URLClassLoader(provider.toArray(new URL[0]), a)) {
            Class<?> inner = b.loadClass(CmNativeProbe.class.getName());
            System.out.println("SEPARATE " + (inner.getClassLoader() == b
                    && b.loadClass(NatCmaIdPrivate.class.getName()).getClassLoader() == a));
            inner.getMethod("inProviderLoader", ClassLoader.class).invoke(null, a);
        }
    }

    /** In the provider's loader: the DiSNI loader as context loader binds nothing; CmNative.bindWhile does. */
    public static void inProviderLoader(ClassLoader disniLoader) {
        Thread t = Thread.currentThread();
        t.setContextClassLoader(disniLoader);
        createChannel(() -> RdmaEventChannel.createEventChannel());
        report("WITHOUT");
        createChannel(() -> CmNative.bindWhile(RdmaEventChannel::createEventChannel));
        report("WITH");
        // the natives refuse oversized private data before they touch the (here absent) id
        System.out.println("CONNECT57 " + Errno.name(CmNative.connect(0, new byte[57], 7, 7)));
        System.out.println("ACCEPT197 " + Errno.name(CmNative.accept(0, new byte[197], 7, 7)));
        System.out.println("REJECT149 " + Errno.name(CmNative.reject(0, new byte[149])));
        System.out.println("TAKE " + CmNative.take(null));
        // the receive native is bound with them, and refuses what it cannot post before it reads a pointer
        RecvPost recv = new RecvPost();
        recv.start();
        System.out.println("RECVNOQP " + Errno.name(recv.post(0, 1)));
        System.out.println("RECV5 " + Errno.name(RecvPost.post(0x1000, 1, 0x2000, SendChain.MAX_SGE + 1)));
        // a destroyed id's pointer never reaches a native that dereferences it
        try {
            com.ibm.disni.verbs.impl.NatCmaIdPrivate id = new com.ibm.disni.verbs.impl.NatCmaIdPrivate(0x1000, null, null);
            System.out.println("LIVE " + CmNative.liveHandle(id));
            id.close();
            CmNative.liveHandle(id);
            System.out.println("DESTROYED accepted");
        } catch (IOException e) {
            System.out.println("DESTROYED " + (e instanceof RdmaException r ? Errno.name(r.errno()) : e.toString()));
        }
    }

    private static void createChannel(DisniDevice.CmCall<RdmaEventChannel> call) {
        try {
            RdmaEventChannel ch = call.run();
            ch.destroyEventChannel(); // a host with rdma_cm: the channel itself is not the point
        } catch (IOException e) {
            System.out.println("CHANNEL " + e.getMessage()); // no /dev/infiniband/rdma_cm here
        }
    }

    private static void report(String when) {
        try {
            CmNative.checkBound();
            System.out.println(when + " bound");
        } catch (RdmaException e) {
            System.out.println(when + " " + Errno.name(e.errno()));
        }
    }
}
