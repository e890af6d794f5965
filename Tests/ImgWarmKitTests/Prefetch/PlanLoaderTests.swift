import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm
#if canImport(Glibc)
import Glibc
#endif

/// `warm`'s input: manifests, then `--retry-from` reports, into one plan.
@Suite struct PlanLoaderTests {
    @Test func readsManifestsThenReportsAndReportsEachProblemWithFileAndLine() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let manifest = dir + "/m.txt", report = dir + "/r.json"
        try "https://e/a.png\nnot a url\nhttps://e/b.png priority=high\n".write(toFile: manifest, atomically: true, encoding: .utf8)
        // An earlier --report: only the failed entry with a URL comes back;
        // one whose URL lost its credentials cannot be fetched as it was.
        try """
        {"entries": [{"outcome": "downloaded", "url": "https://e/a.png"},
                     {"outcome": "failed", "url": "https://e/c.png", "key": "https://e/c.png"},
                     {"outcome": "failed", "url": "https://***@e/d.png"}]}
        """.write(toFile: report, atomically: true, encoding: .utf8)
        let plan = WarmPlan()
        var lines: [String] = []
        try PlanLoader(manifests: [manifest], retryFrom: [report]).load(into: plan, problem: { lines.append($0) })
        #expect(plan.manifestPaths == [manifest, report])
        #expect(plan.uniqueCount == 3)
        #expect((0..<plan.count).map(plan.url) == ["https://e/a.png", "https://e/b.png", "https://e/c.png"])
        #expect(plan.problems.map(\.source) == [ManifestSource(fileIndex: 0, line: 2), ManifestSource(fileIndex: 1, line: 3)])
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix(manifest + ":2: ") == true, "\(lines)")
        #expect(lines.last?.hasPrefix(report + ":3: ") == true, "\(lines)")
    }

    @Test func anUnreadableFileStopsTheLoadNamingIt() throws {
        let dir = makeTempDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let notReport = dir + "/r.json"
        try "{}".write(toFile: notReport, atomically: true, encoding: .utf8)
        for loader in [PlanLoader(manifests: [dir + "/missing.txt"]), PlanLoader(manifests: [dir]),
                       PlanLoader(manifests: [], retryFrom: [notReport])] {
            #expect {
                try loader.load(into: WarmPlan(), problem: { _ in })
            } throws: { error in
                (error as? ImgWarmError).map { $0.description.hasPrefix(dir) && $0.exitStatus == ExitStatus.usage } == true
            }
        }
    }
}
