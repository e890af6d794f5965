import Foundation
import Testing
import TestSupport

/// 200,000 identical manifest lines took 7.5 CPU-s in
/// `--dry-run` against 1.2 s for distinct lines (1,000,000 took 182 s):
/// each group of equal keys was resolved by pairwise removal. Duplicates
/// are now resolved in one pass, so identical lines cost no more than
/// distinct ones. CPU time of the child (wait4), not wall time.
@Suite(.serialized) struct LinearManifestTests {
    static let lines = 200_000

    static func dryRunCPU(_ manifestLines: (Int) -> String, name: String) throws -> MeasuredRun {
        let dir = makeTempDirectory("imgwarm-linear")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let manifest = dir + "/\(name).txt"
        var text = ""
        text.reserveCapacity(lines * 40)
        for i in 0..<lines { text += manifestLines(i) + "\n" }
        FileManager.default.createFile(atPath: manifest, contents: Data(text.utf8))
        return try MeasuredRun.run(["warm", manifest, "--cache", dir + "/cache", "--dry-run", "--progress", "none"])
    }

    @Test func identicalLinesCostNoMoreThanDistinctOnes() throws {
        // Port 9 (discard): a dry run requests nothing.
        let distinct = try Self.dryRunCPU({ "http://127.0.0.1:9/img/\($0).jpg" }, name: "distinct")
        let identical = try Self.dryRunCPU({ _ in "http://127.0.0.1:9/img/same.jpg" }, name: "identical")
        #expect(distinct.status == 0, "\(distinct.stderr)")
        #expect(identical.status == 0, "\(identical.stderr)")
        #expect(distinct.stdout.contains("dry run: \(Self.lines) entries: \(Self.lines) to download"), "\(distinct.stdout)")
        #expect(identical.stdout.contains("dry run: \(Self.lines) entries: \(Self.lines - 1) duplicate, 1 to download"),
                "\(identical.stdout)")
        print("linear manifests: \(Self.lines) lines, dry run: distinct \(distinct.cpuSeconds) CPU-s, identical \(identical.cpuSeconds) CPU-s")
        #expect(identical.cpuSeconds <= 2 * distinct.cpuSeconds,
                "identical \(identical.cpuSeconds) CPU-s against distinct \(distinct.cpuSeconds) CPU-s")
    }
}
