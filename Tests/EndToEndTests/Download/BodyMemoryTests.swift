import Foundation
import Testing
import TestSupport

/// `--memory` on the command line.
struct BodyMemoryEndToEndTests {
    /// A budget far below the bodies (12 of 300 KB, 64 KiB for all):
    /// transfers pause and go on one after another, the oldest first, and
    /// every body arrives whole; the pauses do not count toward --timeout.
    @Test func aTinyBudgetPausesTransfersWithoutDeadlock() throws {
        let f = try WarmFixture()
        var urls: [String] = []
        var served: [[UInt8]] = []
        for i in 0..<12 {
            let bytes = TinyPNG.make(seed: 900 + i) + [UInt8](repeating: UInt8(i), count: 300_000)
            f.server.setFile("/p\(i).png", bytes: bytes, contentType: "image/png")
            urls.append(f.server.url("/p\(i).png"))
            served.append(bytes)
        }
        let report = f.dir + "/r.json"
        let r = try f.warm([f.writeManifest(urls), "--memory", "64KiB", "--decode-memory", "1KiB", "--no-validate",
                            "--timeout", "5", "--retries", "0", "--report", report])
        #expect(r.status == 0, "\(r.stderr)")
        let rows = try f.report(report).entries
        #expect(rows.count == 12 && rows.allSatisfy { $0["outcome"] as? String == "downloaded" }, "\(rows)")
        for (i, row) in rows.enumerated() {
            let file = try #require(row["file"] as? String)
            #expect(FileManager.default.contents(atPath: file).map(Array.init) == served[i], "entry \(i)")
        }
    }

    @Test func decodeMemoryAboveMemoryIsAUsageError() throws {
        let f = try WarmFixture()
        let r = try f.warm([f.writeManifest(f.servePNGs(1)), "--memory", "64MiB", "--decode-memory", "128MiB"])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("--decode-memory") && r.stderr.contains("--memory"), "\(r.stderr)")
        #expect(f.server.requestCount(path: "/img/0.png") == 0)
    }
}
