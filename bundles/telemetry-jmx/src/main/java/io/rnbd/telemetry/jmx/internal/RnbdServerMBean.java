package io.rnbd.telemetry.jmx.internal;

/**
 * {@code io.rnbd:type=rnbd-server}: rnbd:export-add and rnbd:export-remove (without --force:
 * refused while a session has the export open), run as the console runs them.
 */
public interface RnbdServerMBean {
    String[] getExports();

    /**
     * @param backend  memory or file
     * @param size     512, 64k, 1m, 1g ... (memory, or file with create); empty for none
     * @param path     absolute image path (file); empty for none
     * @param create   create the image file of {@code size} if missing (file)
     * @param readOnly refuse RW and MIGRATION opens
     */
    String addExport(String name, String backend, String size, String path, boolean create, boolean readOnly);

    String removeExport(String name);
}
