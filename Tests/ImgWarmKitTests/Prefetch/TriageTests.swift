#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// The pure stages of `warm`, by tables of cases.
@Suite struct TriageTests {
    struct Case: CustomStringConvertible {
        var existing: Int64?
        var failed = false
        var spent = false
        var options = Triage.Options()
        var stored: HTTPValidators? = nil
        var expected: Triage.Decision
        var readsValidators = false
        var description: String { "existing \(existing.map(String.init) ?? "none") failed \(failed) spent \(spent) \(options)" }
    }

    static let etag = HTTPValidators(etag: "\"v1\"", lastModified: nil)
    static let refresh = Triage.Options(refresh: true)
    static let dry = Triage.Options(dryRun: true)

    static let cases: [Case] = [
        // A new entry is fetched, unconditionally.
        Case(existing: nil, expected: .fetch(validators: nil)),
        // A cached file is never requested without --refresh, even when
        // its URL failed since or the budget is spent.
        Case(existing: 1234, expected: .cached(bytes: 1234)),
        Case(existing: 10, failed: true, spent: true, expected: .cached(bytes: 10)),
        Case(existing: 10, options: dry, expected: .cached(bytes: 10)),
        // --refresh revalidates with the stored validators...
        Case(existing: 10, options: refresh, stored: etag, expected: .fetch(validators: etag), readsValidators: true),
        // ...or refetches unconditionally without them.
        Case(existing: 10, options: refresh, stored: nil, expected: .fetch(validators: nil), readsValidators: true),
        Case(existing: 10, options: refresh, stored: HTTPValidators(etag: nil, lastModified: nil),
             expected: .fetch(validators: nil), readsValidators: true),
        // A refresh takes no new room: a spent budget does not stop it.
        Case(existing: 10, spent: true, options: refresh, stored: etag, expected: .fetch(validators: etag), readsValidators: true),
        // The failed list blocks a missing file unless --retry-failed.
        Case(existing: nil, failed: true, expected: .blocked),
        Case(existing: nil, failed: true, options: Triage.Options(retryFailed: true), expected: .fetch(validators: nil)),
        // Blocked wins over the budget (no request either way; blocked says why).
        Case(existing: nil, failed: true, spent: true, expected: .blocked),
        Case(existing: nil, spent: true, expected: .skipped(.budget)),
        Case(existing: nil, failed: true, spent: true, options: Triage.Options(retryFailed: true), expected: .skipped(.budget)),
        // Dry run: one more decision, never a fetch and never validators.
        Case(existing: nil, options: dry, expected: .wouldFetch(revalidate: false)),
        Case(existing: 10, options: Triage.Options(refresh: true, dryRun: true), expected: .wouldFetch(revalidate: true)),
        Case(existing: nil, failed: true, options: dry, expected: .blocked),
        Case(existing: nil, spent: true, options: dry, expected: .skipped(.budget)),
        Case(existing: nil, failed: true, options: Triage.Options(retryFailed: true, dryRun: true), expected: .wouldFetch(revalidate: false)),
    ]

    @Test(arguments: cases) func decides(_ c: Case) {
        var reads = 0
        let decision = Triage.decide(existingBytes: c.existing, isFailedURL: c.failed, budgetSpent: c.spent, options: c.options) {
            reads += 1
            return c.stored
        }
        #expect(decision == c.expected)
        // The state store is read only for a revalidation.
        #expect(reads == (c.readsValidators ? 1 : 0))
    }

    @Test func triagedOutcomesNeverSayDownloaded() {
        let table: [(Triage.Decision, Outcome, EntryError, Bool)] = [
            (.cached(bytes: 70_000), .cached, .none, true),
            (.blocked, .blocked, .none, false),
            (.skipped(.budget), .skipped, .budget, false),
            (.wouldFetch(revalidate: false), .wouldDownload, .none, false),
            (.wouldFetch(revalidate: true), .wouldRevalidate, .none, true),
        ]
        for (decision, outcome, error, exists) in table {
            let r = Finish.triaged(decision)
            #expect(r?.outcome == outcome, "\(decision)")
            #expect(r?.error == error, "\(decision)")
            #expect(r?.fileExists == exists, "\(decision)")
        }
        #expect(Finish.triaged(.cached(bytes: 70_000))?.bytes == 70_000)
        #expect(Finish.triaged(.fetch(validators: nil)) == nil)
    }
}
