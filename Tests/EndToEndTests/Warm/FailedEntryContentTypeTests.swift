import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TestSupport

/// A body that is not a valid image, or an error response, keeps its
/// Content-Type in the reports: what a captive portal's or a login page's
/// text/html says about the failure is the first thing to look at.
@Suite struct FailedEntryContentType {
    @Test func badImagesReportTheContentTypeTheServerSent() throws {
        let f = try WarmFixture()
        let good = f.servePNGs(1)[0]
        // The test server's /html: 200, "text/html; charset=utf-8".
        let html = f.server.url("/html")
        // An image type with a cut PNG behind it.
        let png = TinyPNG.make(width: 9, height: 7, seed: 3)
        f.server.setFile("/cut.png", bytes: Array(png.prefix(png.count / 2)), contentType: "image/png")
        let cut = f.server.url("/cut.png")
        // Error responses: the server's 404 page is text/plain; /status/404
        // sends no Content-Type at all.
        let missing = f.server.url("/no/such/image.png"), bare = f.server.url("/status/404")
        let manifest = f.writeManifest([good, html, cut, missing, bare])
        let report = f.dir + "/report.json", junit = f.dir + "/junit.xml"
        let r = try f.warm([manifest, "--report", report, "--junit", junit])
        #expect(r.status == 1, "\(r.stderr)")

        let rows = Dictionary(uniqueKeysWithValues: try f.report(report).entries.map { ($0["url"] as? String ?? "", $0) })
        #expect(rows[html]?["error"] as? String == "bad-image")
        #expect(rows[html]?["content_type"] as? String == "text/html; charset=utf-8")
        #expect(rows[cut]?["error"] as? String == "bad-image")
        #expect(rows[cut]?["content_type"] as? String == "image/png")
        #expect(rows[good]?["content_type"] as? String == "image/png")
        #expect(rows[missing]?["status"] as? Int == 404)
        #expect(rows[missing]?["content_type"] as? String == "text/plain")
        #expect(rows[bare]?["status"] as? Int == 404)
        #expect(rows[bare]?["content_type"] is NSNull)

        let doc = try XMLDocument(contentsOf: URL(fileURLWithPath: junit), options: [])
        let failures = try #require(doc.rootElement()).elements(forName: "testsuite")
            .flatMap { $0.elements(forName: "testcase") }
            .compactMap { c in c.elements(forName: "failure").first.map { (c.attribute(forName: "name")?.stringValue, $0.stringValue ?? "") } }
        let bodies = Dictionary(uniqueKeysWithValues: failures.map { ($0.0 ?? "", $0.1) })
        #expect(bodies[html]?.contains("content_type: text/html; charset=utf-8\n") == true, "\(bodies)")
        #expect(bodies[cut]?.contains("content_type: image/png\n") == true, "\(bodies)")
        #expect(bodies[missing]?.contains("content_type: text/plain\n") == true, "\(bodies)")
        #expect(bodies[bare]?.contains("content_type:") == false, "\(bodies)")
    }
}
