package io.rnbd.rdma.command.completers;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rnbd.rdma.api.RdmaLinkAdmin;

import org.apache.karaf.shell.api.console.CommandLine;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

class LinkNameCompleterTest {
    private static CommandLine typed(String prefix) {
        return (CommandLine) Proxy.newProxyInstance(LinkNameCompleterTest.class.getClassLoader(),
                new Class<?>[] {CommandLine.class}, (p, m, a) -> {
                    switch (m.getName()) {
                        case "getCursorArgument":
                            return prefix;
                        case "getArgumentPosition":
                            return prefix.length();
                        case "getBufferPosition":
                            return prefix.length();
                        default:
                            return null;
                    }
                });
    }

    private static RdmaLinkAdmin links(List<String> names) {
        return (RdmaLinkAdmin) Proxy.newProxyInstance(LinkNameCompleterTest.class.getClassLoader(),
                new Class<?>[] {RdmaLinkAdmin.class}, (p, m, a) -> m.getName().equals("links") ? names : null);
    }

    @Test
    void offersTheConfiguredLinksMatchingThePrefix() {
        LinkNameCompleter c = new LinkNameCompleter();
        c.linkAdmin = links(List.of("soft0", "soft1", "lab"));
        List<String> candidates = new ArrayList<>();
        c.complete(null, typed("so"), candidates);
        assertEquals(List.of("soft0", "soft1"),
                candidates.stream().map(String::trim).sorted().collect(Collectors.toList()));
    }
}
