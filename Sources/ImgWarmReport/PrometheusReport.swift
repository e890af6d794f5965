import Foundation
import ImgWarmSupport

extension RunReport {
    /// `--metrics FILE`: Prometheus text exposition format for
    /// node_exporter's textfile collector, written atomically. The last
    /// success timestamp is carried over from the previous file when this
    /// run did not succeed, so an alert on its age sees the truth.
    public func writePrometheus(to path: String, succeeded: Bool) throws {
        let snap = totals.snapshot()
        let label = "cache=\(Prometheus.label(cacheDirectory))"
        var out = ""
        func metric(_ name: String, _ help: String, _ type: String, _ samples: [(String, String)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for (labels, value) in samples {
                out += "\(name){\(label)\(labels.isEmpty ? "" : "," + labels)} \(value)\n"
            }
        }
        metric("imgwarm_entries", "Manifest entries of the last warm run, by outcome.", "gauge",
               Outcome.allCases.filter { $0 != .pending && !$0.isDryRun }.map { ("outcome=\"\($0.name)\"", "\(snap[$0])") })
        metric("imgwarm_errors", "Failed or skipped entries of the last warm run, by error class.", "gauge",
               EntryError.allCases.filter { $0 != .none }.map { ("class=\"\($0.name ?? "")\"", "\(snap.errors[$0] ?? 0)") })
        metric("imgwarm_downloaded_bytes", "Bytes downloaded by the last warm run.", "gauge", [("", "\(snap.bytesDownloaded)")])
        metric("imgwarm_entry_bytes", "Bytes of all entries of the last warm run (cached ones included).", "gauge", [("", "\(snap.bytesTotal)")])
        metric("imgwarm_duration_seconds", "Wall time of the last warm run.", "gauge", [("", String(format: "%.3f", snap.elapsed))])
        if !hosts.isEmpty {
            func perHost(_ value: (HostFigures) -> String?) -> [(String, String)] {
                hosts.compactMap { h in value(h).map { ("host=\(Prometheus.label(h.host))", $0) } }
            }
            metric("imgwarm_host_requests", "Requests started per host by the last warm run.", "gauge", perHost { "\($0.requests)" })
            metric("imgwarm_host_throttled_responses", "Answers 429 or 503 per host in the last warm run.", "gauge",
                   perHost { "\($0.throttledResponses)" })
            metric("imgwarm_host_rate_limit", "Requests a second a host was held to at the end of the last warm run (--rate, or lowered by 429/503).",
                   "gauge", perHost { h in [h.configuredRate, h.throttledRate].compactMap { $0 }.min().map { String(format: "%.2f", $0) } })
            metric("imgwarm_host_concurrency_limit", "Adaptive limit of requests in flight per host at the end of the last warm run (-j auto).",
                   "gauge", perHost { $0.concurrencyLimit.map(String.init) })
            metric("imgwarm_host_peak_in_flight", "Most requests in flight at once per host in the last warm run.", "gauge",
                   perHost { "\($0.peakInFlight)" })
        }
        let now = Date().timeIntervalSince1970
        metric("imgwarm_last_run_timestamp_seconds", "When the last warm run ended.", "gauge", [("", String(format: "%.0f", now))])
        var lastSuccess: Double? = succeeded ? now : Prometheus.previousValue(of: "imgwarm_last_success_timestamp_seconds", in: path)
        if lastSuccess == nil && succeeded { lastSuccess = now }
        if let lastSuccess {
            metric("imgwarm_last_success_timestamp_seconds", "When a warm run last ended with exit status 0.", "gauge",
                   [("", String(format: "%.0f", lastSuccess))])
        }
        let w = try AtomicFileWriter(path: path)
        w.write(out)
        try w.commit()
    }
}

enum Prometheus {
    static func label(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n") + "\""
    }

    static func previousValue(of metric: String, in path: String) -> Double? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(metric + "{") || line.hasPrefix(metric + " ") {
            if let v = line.split(separator: " ").last, let d = Double(v) { return d }
        }
        return nil
    }
}
