package io.rnbd.rnbd.command;

import java.util.regex.Pattern;

/**
 * A backend's hints name its parameters as they are written in a configuration
 * ({@code give size= to create it}, {@code create=true extends it}); the user of
 * {@code rnbd:export-add} typed flags instead, and is told in flags ({@code --size},
 * {@code --create}). Values the backend echoes ({@code size=1048576}) stay as they are.
 */
final class ConsoleWords {
    private static final Pattern SIZE = Pattern.compile("(?<![\\w.])size=(?![\\w.])");
    private static final Pattern PATH = Pattern.compile("(?<![\\w.])path=(?![\\w./])");
    private static final Pattern CREATE = Pattern.compile("(?<![\\w.])create=true\\b");

    private ConsoleWords() {
    }

    static String flags(String message) {
        if (message == null) {
            return null;
        }
        return CREATE.matcher(PATH.matcher(SIZE.matcher(message).replaceAll("--size")).replaceAll("--path"))
                .replaceAll("--create");
    }
}
