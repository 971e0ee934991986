/**
 * The verbs SPI: what RTRS is written against and what every RDMA provider implements.
 *
 * <p>The founding rule of the appliance lives here: an {@link io.rnbd.rdma.api.IbClient}
 * touches an {@link io.rnbd.rdma.api.RdmaDevice} only between the registry's
 * {@code add(device)} and {@code remove(device)} calls. Nothing listens, connects or
 * registers memory before that, so bundle start order can never crash anything.
 *
 * <p>All calls are asynchronous in the RDMA sense: posting a work request returns at
 * once and its outcome arrives as a {@link io.rnbd.rdma.api.WorkCompletion} on the
 * queue pair's {@link io.rnbd.rdma.api.CompletionHandler}, in posting order. A provider
 * that delivers completions in passes says so by its threads
 * ({@link io.rnbd.rdma.api.CompletionThread}), each pass inside a
 * {@link io.rnbd.rdma.api.CompletionBatch} to whose end the layers above may defer work.
 */
@Export
@Version("2.2.0")
package io.rnbd.rdma.api;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
