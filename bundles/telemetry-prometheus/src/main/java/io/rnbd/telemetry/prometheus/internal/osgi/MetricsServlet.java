package io.rnbd.telemetry.prometheus.internal.osgi;

import io.rnbd.telemetry.api.Telemetry;
import io.rnbd.telemetry.prometheus.internal.PrometheusText;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import javax.servlet.Servlet;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * {@code /metrics} on Karaf's HTTP service (Pax Web's whiteboard): the telemetry tables,
 * rendered per scrape. Nothing runs between scrapes and nothing is counted per IO.
 */
@Component(service = Servlet.class, configurationPid = MetricsServlet.PID, property = {
    MetricsServlet.PATTERN + "=/metrics",
    "osgi.http.whiteboard.servlet.name=rnbd-metrics"})
@Designate(ocd = MetricsServlet.Config.class)
public final class MetricsServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    static final String PID = "io.rnbd.telemetry.prometheus";
    static final String PATTERN = "osgi.http.whiteboard.servlet.pattern";

    @ObjectClassDefinition(id = PID, name = "RNBD Prometheus metrics",
            description = "The Prometheus text exposition of RDMA devices, RTRS sessions and paths, exports, mapped "
                    + "devices and the NBD gateway, on Karaf's HTTP port (etc/org.ops4j.pax.web.cfg)")
    public @interface Config {
        @AttributeDefinition(name = "Path", description = "Where the metrics are served (a servlet pattern)")
        String osgi_http_whiteboard_servlet_pattern() default "/metrics";
    }

    private final transient Telemetry telemetry;

    @Activate
    public MetricsServlet(@Reference Telemetry telemetry) {
        this.telemetry = telemetry;
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        byte[] body = PrometheusText.render(telemetry.tables()).getBytes(StandardCharsets.UTF_8);
        resp.setContentType(PrometheusText.CONTENT_TYPE);
        resp.setHeader("Cache-Control", "no-store");
        resp.setContentLength(body.length);
        resp.getOutputStream().write(body);
    }
}
