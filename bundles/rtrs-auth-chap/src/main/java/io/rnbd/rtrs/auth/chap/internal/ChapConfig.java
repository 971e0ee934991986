package io.rnbd.rtrs.auth.chap.internal;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The configuration of PID {@code io.rnbd.rtrs.auth.chap}, validated: settings, the keys
 * given inline as {@code host.<id>} / {@code ctrl.<id>}, and the keys file (null for none).
 */
public record ChapConfig(ChapSettings settings, Map<String, HostKeys> inlineKeys, Path keysFile) {

    /**
     * @param keysFile  the raw {@code keys.file} value; {@code ${name}} is replaced from
     *                  {@code sysprops}; empty, or a placeholder with no value (outside Karaf), means none
     * @param props     the whole configuration, scanned for key entries
     * @throws IllegalArgumentException with a message that names the problem, never a secret
     */
    public static ChapConfig parse(String targetId, String hashes, String dhGroups, String keysFile,
                                   Map<String, ?> props, UnaryOperator<String> sysprops) {
        ChapSettings settings = ChapSettings.parse(targetId, hashes, dhGroups);
        Map<String, String> entries = new HashMap<>();
        props.forEach((k, v) -> {
            if (KeyEntries.isKeyEntry(k)) {
                entries.put(k, v == null ? "" : v.toString());
            }
        });
        Map<String, HostKeys> inline;
        try {
            inline = KeyEntries.parse(entries, "configuration");
        } catch (ChapKeyException e) {
            throw new IllegalArgumentException(e.getMessage());
        }
        return new ChapConfig(settings, inline, resolve(keysFile, sysprops));
    }

    static Path resolve(String keysFile, UnaryOperator<String> sysprops) {
        if (keysFile == null || keysFile.isBlank()) {
            return null;
        }
        String s = keysFile.trim();
        int start;
        while ((start = s.indexOf("${")) >= 0) {
            int end = s.indexOf('}', start);
            if (end < 0) {
                throw new IllegalArgumentException("keys.file: unterminated ${ in '" + keysFile + "'");
            }
            String value = sysprops.apply(s.substring(start + 2, end));
            if (value == null) {
                return null;
            }
            s = s.substring(0, start) + value + s.substring(end + 1);
        }
        return Path.of(s);
    }
}
