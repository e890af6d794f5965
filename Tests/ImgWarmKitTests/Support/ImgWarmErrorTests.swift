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

/// Every reason an imgwarm command ends with, its exit status
/// (docs/cli-contract.md: 2 usage, 3 the cache cannot be used, 4 imgwarm
/// itself could not run; never 1, which says entries failed) and the shape
/// of its one line.
@Suite struct ImgWarmErrorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let error: ImgWarmError
        let status: Int32
        let line: String
        let path: String?
        var testDescription: String { line }
    }

    static let cases: [Case] = [
        .init(error: .usage("--trim-ratio must be above 0 and at most 1 (SDWebImage: 0.5)"), status: 2,
              line: "--trim-ratio must be above 0 and at most 1 (SDWebImage: 0.5)", path: nil),
        .init(error: .manifest(path: "urls.txt", reason: "cannot open manifest: No such file or directory"), status: 2,
              line: "urls.txt: cannot open manifest: No such file or directory", path: "urls.txt"),
        .init(error: .report(path: "last.json", reason: "not an imgwarm JSON report (no \"entries\" array)"), status: 2,
              line: "last.json: not an imgwarm JSON report (no \"entries\" array)", path: "last.json"),
        .init(error: .cache(path: "/c/.imgwarm", reason: "owned by uid 65534, not by this user", errno: EPERM), status: 3,
              line: "/c/.imgwarm: owned by uid 65534, not by this user", path: "/c/.imgwarm"),
        .init(error: .cache(path: "/c/journal", reason: "line 7: unknown state 'BOGUS'"), status: 3,
              line: "/c/journal: line 7: unknown state 'BOGUS'", path: "/c/journal"),
        .init(error: ImgWarmError(.engineUnavailable("initialization failed: Out of memory")), status: 4,
              line: "libcurl: initialization failed: Out of memory", path: nil),
        .init(error: ImgWarmError(.tooFewDescriptors(limit: 16, needed: 35)), status: 4,
              line: "ulimit -n is 16: imgwarm needs at least 35 open files to run; raise it (ulimit -n 1024)", path: nil),
        .init(error: ImgWarmError(.unexpected("SQLite error 11: database disk image is malformed")), status: 4,
              line: "unexpected error: SQLite error 11: database disk image is malformed", path: nil),
    ]

    @Test(arguments: cases) func reasonGivesStatusAndLine(_ c: Case) {
        #expect(c.error.exitStatus == c.status)
        #expect(c.error.description == c.line)
        #expect(!c.error.description.contains("\n"))
        #expect(c.error.path == c.path)
        // Status 1 is kept for entries that failed.
        #expect(c.error.exitStatus != ExitStatus.entriesFailed)
    }

    /// Every reason is in the table above: a new one must be given its
    /// status and line there.
    @Test func everyReasonIsInTheTable() {
        func kind(_ r: ImgWarmError.Reason) -> String {
            switch r {
            case .usage: return "usage"
            case .manifestUnreadable: return "manifest"
            case .reportUnreadable: return "report"
            case .cacheUnusable: return "cache"
            case .engineUnavailable: return "engine"
            case .tooFewDescriptors: return "descriptors"
            case .unexpected: return "unexpected"
            }
        }
        #expect(Set(Self.cases.map { kind($0.error.reason) }) == ["usage", "manifest", "report", "cache", "engine", "descriptors", "unexpected"])
    }

    /// A cache error keeps the errno the store and the run decide on.
    @Test(arguments: [(ENOSPC, true), (EDQUOT, true), (EACCES, false), (0, false)] as [(Int32, Bool)])
    func diskFullIsDecidedByErrno(_ e: Int32, _ full: Bool) {
        let error = ImgWarmError.cache(path: "/c/x.png", reason: "write failed", errno: e)
        #expect(error.errno == e)
        #expect(error.isDiskFull == full)
        #expect(ImgWarmError.usage("x").errno == 0)
    }
}
