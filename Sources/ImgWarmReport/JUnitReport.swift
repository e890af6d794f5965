import Foundation

extension RunReport {
    /// `--junit FILE`: one test suite per manifest, one test case per
    /// entry; failed entries are failures carrying outcome, error class,
    /// status, the response's Content-Type and reason; blocked entries are
    /// failures too (missing from the cache), saying when they failed and
    /// how to fetch them; skipped entries are skipped tests.
    public func writeJUnit(to path: String) throws {
        struct Suite { var tests = 0, failures = 0, skipped = 0, ms = 0 }
        var suites: [String: Suite] = [:]
        var suiteOrder: [String] = []
        forEachRow { row in
            if suites[row.manifest] == nil { suiteOrder.append(row.manifest) }
            var s = suites[row.manifest] ?? Suite()
            s.tests += 1
            if row.outcome == "failed" || row.outcome == "blocked" { s.failures += 1 }
            if row.outcome == "skipped" { s.skipped += 1 }
            s.ms += row.milliseconds
            suites[row.manifest] = s
        }
        let w = try AtomicFileWriter(path: path)
        let total = suites.values.reduce(Suite()) { Suite(tests: $0.tests + $1.tests, failures: $0.failures + $1.failures, skipped: $0.skipped + $1.skipped, ms: $0.ms + $1.ms) }
        let seconds = totals.snapshot().elapsed
        w.write("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        w.write("<testsuites name=\"imgwarm\" tests=\"\(total.tests)\" failures=\"\(total.failures)\" errors=\"0\" skipped=\"\(total.skipped)\" time=\"\(String(format: "%.3f", seconds))\">\n")
        var current: String?
        forEachRow { row in
            if row.manifest != current {
                if current != nil { w.write("  </testsuite>\n") }
                current = row.manifest
                let s = suites[row.manifest] ?? Suite()
                w.write("  <testsuite name=\(XML.attr(row.manifest)) tests=\"\(s.tests)\" failures=\"\(s.failures)\" errors=\"0\" skipped=\"\(s.skipped)\" time=\"\(String(format: "%.3f", Double(s.ms) / 1000))\">\n")
            }
            let name = row.url ?? row.source
            w.write("    <testcase classname=\(XML.attr(row.manifest)) name=\(XML.attr(name)) file=\(XML.attr(row.source)) time=\"\(String(format: "%.3f", Double(row.milliseconds) / 1000))\"")
            switch row.outcome {
            case "failed":
                let error = row.error ?? "failed"
                var message = error
                if let status = row.status { message += " (HTTP \(status))" }
                if let reason = row.reason { message += ": " + reason }
                var body = "outcome: failed\nerror: \(error)\n"
                if let status = row.status { body += "status: \(status)\n" }
                if let type = row.contentType { body += "content_type: \(type)\n" }
                body += "source: \(row.source)\n"
                if let reason = row.reason { body += "reason: \(reason)\n" }
                w.write(">\n      <failure type=\(XML.attr(error)) message=\(XML.attr(message))>\(XML.text(body))</failure>\n    </testcase>\n")
            case "blocked":
                let (message, body) = blockedText(row)
                w.write(">\n      <failure type=\"blocked\" message=\(XML.attr(message))>\(XML.text(body))</failure>\n    </testcase>\n")
            case "skipped":
                w.write(">\n      <skipped message=\(XML.attr("skipped" + (row.error.map { ": " + $0 } ?? "")))/>\n    </testcase>\n")
            default:
                var out = "outcome: \(row.outcome)"
                if let file = row.file { out += "\nfile: \(file)" }
                w.write(">\n      <system-out>\(XML.text(out))</system-out>\n    </testcase>\n")
            }
        }
        if current != nil { w.write("  </testsuite>\n") }
        w.write("</testsuites>\n")
        try w.commit()
    }
}

extension RunReport {
    /// A blocked entry's failure message and body: when it failed before,
    /// why, and how to fetch it again.
    func blockedText(_ row: Row) -> (String, String) {
        let earlier = row.url.flatMap(earlierFailure)
        var why = "failed in an earlier run"
        var body = "outcome: blocked\n"
        if let earlier {
            let when = Date(timeIntervalSince1970: earlier.failedAt).formatted(.iso8601)
            var cause = earlier.errorClass
            if let status = earlier.status { cause += " (HTTP \(status))" }
            why = "failed at \(when): \(cause)"
            body += "failed_at: \(when)\nerror: \(earlier.errorClass)\n"
            if let status = earlier.status { body += "status: \(status)\n" }
            body += "reason: \(earlier.reason)\n"
        }
        body += "source: \(row.source)\nretry: imgwarm warm --retry-failed (or imgwarm cache failed --clear)\n"
        return ("blocked: \(why); --retry-failed fetches it again", body)
    }
}

enum XML {
    static func text(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for u in s.unicodeScalars {
            switch u {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                // XML 1.0 forbids most control characters even escaped.
                if u.value < 0x20 && u != "\n" && u != "\t" && u != "\r" || u.value == 0xFFFE || u.value == 0xFFFF {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out
    }
    static func attr(_ s: String) -> String { "\"" + text(s).replacingOccurrences(of: "\n", with: "&#10;") + "\"" }
}
