package io.rnbd.telemetry.jmx.internal;

/**
 * {@code io.rnbd:type=rnbd-server}: rnbd:export-add and rnbd:export-remove (without --force:
 * refused while a session has the export open), the same {@code RnbdServerAdmin} operations the
 * console's commands call; each returns the line the console prints. Each registered
 * backend is also an MBean of its own ({@code io.rnbd:type=rnbd-backend}).
 */
public interface RnbdServerMBean {
    String[] getExports();

    /**
     * @param backend  a registered backend by the name it announces (memory, file, rbd, a bundle of your own)
     * @param size     512, 64k, 1m, 1g ... (memory, or file with create); empty for none
     * @param path     absolute image path (file); empty for none
     * @param create   create the image file of {@code size} if missing (file)
     * @param readOnly refuse RW and MIGRATION opens
     */
    String addExport(String name, String backend, String size, String path, boolean create, boolean readOnly);

    /**
     * An export on any registered backend with its own parameters, as {@code rnbd:export-add
     * --backend BACKEND --param KEY=VALUE ...}.
     *
     * @param params each {@code KEY=VALUE}, kept as {@code backend.KEY} (e.g. {@code image=vol1} for rbd)
     */
    String addExportWithParams(String name, String backend, String[] params, boolean readOnly);

    /** The backends registered, as {@code rnbd:backends} lists them: {@code name bundle version [id]}. */
    String[] getBackends();

    String removeExport(String name);
}
