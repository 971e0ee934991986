package io.rnbd.telemetry.jmx.internal;

/** Runs one console command line and returns what it printed (Karaf's shell, in the component). */
@FunctionalInterface
public interface ConsoleRunner {
    String execute(String commandLine);
}
