import Foundation
import Testing
import TestSupport

/// `--memory` on the command line.
struct BodyMemoryEndToEndTests {
    @Test func decodeMemoryAboveMemoryIsAUsageError() throws {
        let f = try WarmFixture()
        let r = try f.warm([f.writeManifest(f.servePNGs(1)), "--memory", "64MiB", "--decode-memory", "128MiB"])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("--decode-memory") && r.stderr.contains("--memory"), "\(r.stderr)")
        #expect(f.server.requestCount(path: "/img/0.png") == 0)
    }
}
