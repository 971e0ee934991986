/**
 * The load generator: fio-like IO (random or sequential reads, writes or a mix, a queue
 * depth, batches under one plug, verified writes) against any
 * {@link io.rnbd.rnbd.api.BlockDevice}, with latency histograms (common's, 2.0: its own went), a progress callback and a
 * result table or JSON. Plain Java: the console's {@code rnbd:bench} runs it on a mapped
 * device, the benchmarks (bench/) on RNBD stacks and NBD clients, {@link
 * io.rnbd.loadgen.LoadGenMain} on a backend outside Karaf. Until issue 24 it was the
 * unexported {@code io.rnbd.rnbd.command.loadgen} of rnbd-command.
 */
@Export
@Version("2.0.0")
package io.rnbd.loadgen;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
