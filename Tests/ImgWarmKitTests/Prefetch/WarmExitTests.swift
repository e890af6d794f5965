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

/// `warm`'s exit status (docs/cli-contract.md): the first rule that applies
/// decides, and the line on standard error says why.
@Suite struct WarmExitTests {
    static let diskFull = ImgWarmError.cache(path: "/c/ab.png", reason: "write: No space left on device", errno: ENOSPC)
    static let unwritable = ImgWarmError.cache(path: "/c", reason: "not writable", errno: EACCES)

    @Test(arguments: [
        // (ending, status, message)
        (WarmEnding(uniqueCount: 3), 0, nil),
        (WarmEnding(uniqueCount: 3, failed: 2, maxFailures: 2), 0, nil),
        (WarmEnding(uniqueCount: 3, failed: 3, maxFailures: 2), 1, nil),
        (WarmEnding(uniqueCount: 3, reportWriteFailed: true), 1, nil),
        // Blocked entries are missing from the cache: failures.
        (WarmEnding(uniqueCount: 3, blocked: 1), 1, nil),
        (WarmEnding(uniqueCount: 3, failed: 1, blocked: 1, maxFailures: 1), 1, nil),
        (WarmEnding(uniqueCount: 3, failed: 1, blocked: 1, maxFailures: 2), 0, nil),
        // A shard that got nothing of the manifest succeeds.
        (WarmEnding(uniqueCount: 0, outsideShard: 5), 0, nil),
        // An empty manifest (a generated one may be): nothing to do, a warning.
        (WarmEnding(uniqueCount: 0), 0, "warning: no entries in the manifests (0 entries)"),
        // Only unusable lines: they are failed entries.
        (WarmEnding(uniqueCount: 0, hadProblems: true, failed: 1), 1, "no usable entries in the manifests"),
        (WarmEnding(uniqueCount: 0, hadProblems: true, failed: 1, reportWriteFailed: true), 1, "no usable entries in the manifests"),
        (WarmEnding(signal: SIGINT, uniqueCount: 10, done: 4, total: 10), 130, "interrupted by SIGINT; 4 of 10 entries done, 6 not started or cut short (skipped)"),
        (WarmEnding(signal: SIGINT, uniqueCount: 1, done: 1, total: 1), 130, "interrupted by SIGINT; 1 of 1 entry done"),
        (WarmEnding(signal: SIGTERM, uniqueCount: 0, failed: 9, done: 0, total: 0), 143, "interrupted by SIGTERM; 0 of 0 entries done"),
        // A fatal cache error outranks a signal.
        (WarmEnding(fatal: diskFull, signal: SIGINT, uniqueCount: 10, failed: 1), 3,
         "/c/ab.png: disk full; stopped (files already written are intact)"),
        (WarmEnding(fatal: unwritable, uniqueCount: 0), 3, "/c: not writable"),
    ] as [(WarmEnding, Int32, String?)])
    func decides(_ ending: WarmEnding, _ status: Int32, _ message: String?) {
        #expect(WarmExit.decide(ending) == WarmExit(status: status, message: message))
    }
}
