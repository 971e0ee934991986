package io.rnbd.telemetry.jmx.internal;

import java.lang.reflect.Method;
import java.util.Arrays;
import javax.management.MBeanOperationInfo;
import javax.management.MBeanParameterInfo;
import javax.management.NotCompliantMBeanException;
import javax.management.StandardMBean;

/**
 * A standard MBean whose operations show their parameters' Java names (session, path ...)
 * instead of p1, p2 in jconsole and Hawtio; the bundle is compiled with -parameters.
 */
final class NamedStandardMBean<T> extends StandardMBean {
    private final Class<T> type;

    NamedStandardMBean(T implementation, Class<T> type) throws NotCompliantMBeanException {
        super(implementation, type);
        this.type = type;
    }

    @Override
    protected String getParameterName(MBeanOperationInfo op, MBeanParameterInfo param, int sequence) {
        String[] signature = Arrays.stream(op.getSignature()).map(MBeanParameterInfo::getType).toArray(String[]::new);
        for (Method m : type.getMethods()) {
            if (m.getName().equals(op.getName()) && Arrays.equals(signature,
                    Arrays.stream(m.getParameterTypes()).map(Class::getName).toArray(String[]::new))
                    && m.getParameters()[sequence].isNamePresent()) {
                return m.getParameters()[sequence].getName();
            }
        }
        return super.getParameterName(op, param, sequence);
    }
}
