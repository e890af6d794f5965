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

@Suite struct FinishTests {
    typealias Verdict = Result<ImageInfo, ValidationFailure>
    static let url = "https://img.example/a.png"
    static let entry = Finish.Entry(url: url, key: url)
    static let png = ImageInfo(format: .png, width: 70_000, height: 3)
    /// A 200 that names its media type, so every row shows whether the
    /// result keeps it.
    static func ok(_ body: Int = 100, etag: String? = nil, contentType: String = "image/png") -> DownloadResponse {
        DownloadResponse(status: 200, body: [UInt8](repeating: 1, count: body), etag: etag, contentType: contentType, attempts: 2)
    }
    static let portal = "text/html; charset=utf-8"
    static let noDecoder = ValidationFailure("AVIF: cannot validate, libavif is not installed (apt-get install libavif15)",
                                             kind: .noDecoder)
    static func failure(_ c: DownloadErrorClass, status: Int? = nil, transient: Bool = false, contentType: String? = nil) -> DownloadResult {
        .failure(DownloadFailure(errorClass: c, status: status, message: "why \(c)", isTransient: transient, attempts: 3, elapsed: 0,
                                 contentType: contentType))
    }
    static let full = ImgWarmError.cache(path: "/c/x.png", reason: "write failed: No space left on device", errno: ENOSPC)

    struct Case: CustomStringConvertible {
        var name: String
        var entry = FinishTests.entry
        var download: DownloadResult
        var validation: Verdict? = nil
        var store: StoreResult? = nil
        var outcome: Outcome
        var error: EntryError = .none
        var announce = false
        var fileExists = false
        var fatal = false
        /// "failed" / "succeeded" per state change, in order.
        var changes: [String] = []
        var reason: String? = nil
        /// The Content-Type the result keeps for the report: every 2xx
        /// response's, stored or not (a failed entry's says why).
        var contentType: String? = nil
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(name: "stored", download: .success(ok()), validation: .success(png), store: .stored(path: "/c/x.png"),
             outcome: .downloaded, fileExists: true, contentType: "image/png"),
        // Only successes that change state write it.
        Case(name: "stored with an ETag keeps it", download: .success(ok(etag: "\"e\"")), validation: .success(png),
             store: .stored(path: "/c/x.png"), outcome: .downloaded, fileExists: true, changes: ["succeeded"], contentType: "image/png"),
        Case(name: "stored, was on the failed list", entry: Finish.Entry(url: url, key: url, wasFailed: true),
             download: .success(ok()), validation: .success(png), store: .stored(path: "/c/x.png"), outcome: .downloaded, fileExists: true,
             changes: ["succeeded"], contentType: "image/png"),
        Case(name: "stored over a refreshed file drops old validators", entry: Finish.Entry(url: url, key: url, replacesFile: true),
             download: .success(ok()), validation: .success(png), store: .stored(path: "/c/x.png"), outcome: .downloaded, fileExists: true,
             changes: ["succeeded"], contentType: "image/png"),
        Case(name: "bad image", download: .success(ok()), validation: .failure(ValidationFailure("truncated PNG")),
             outcome: .failed, error: .badImage, announce: true, changes: ["failed"], reason: "truncated PNG", contentType: "image/png"),
        Case(name: "a portal's page", download: .success(ok(contentType: portal)),
             validation: .failure(ValidationFailure("not an image (looks like HTML)")), outcome: .failed, error: .badImage,
             announce: true, changes: ["failed"], reason: "not an image (looks like HTML)", contentType: portal),
        // The format's decoder library cannot be opened here: failed
        // (nothing stored: `store` is nil), counted under its own class,
        // and never on the failed-URL list, nor taken off it.
        Case(name: "no decoder here", download: .success(ok(contentType: "image/avif")),
             validation: .failure(noDecoder), outcome: .failed, error: .noDecoder, announce: true, changes: [],
             reason: noDecoder.reason, contentType: "image/avif"),
        Case(name: "no decoder here, was on the failed list", entry: Finish.Entry(url: url, key: url, wasFailed: true),
             download: .success(ok(etag: "\"e\"", contentType: "image/avif")), validation: .failure(noDecoder),
             outcome: .failed, error: .noDecoder, announce: true, changes: [], reason: noDecoder.reason, contentType: "image/avif"),
        Case(name: "over budget", download: .success(ok()), validation: .success(png), store: .overBudget(limit: 4096),
             outcome: .skipped, error: .budget, reason: "would pass the budget of 4096 bytes", contentType: "image/png"),
        // The fatal-error policy: a full disk, read-only or forbidden
        // folder stops the run; other write errors fail the entry only.
        Case(name: "disk full", download: .success(ok()), validation: .success(png), store: .failed(full),
             outcome: .failed, error: .disk, announce: true, fatal: true, reason: full.description, contentType: "image/png"),
        Case(name: "read-only", download: .success(ok()), validation: .success(png),
             store: .failed(ImgWarmError.cache(path: "/c", reason: "ro", errno: EROFS)), outcome: .failed, error: .disk, announce: true,
             fatal: true, reason: "/c: ro", contentType: "image/png"),
        Case(name: "forbidden", download: .success(ok()), validation: .success(png),
             store: .failed(ImgWarmError.cache(path: "/c", reason: "no", errno: EACCES)), outcome: .failed, error: .disk, announce: true,
             fatal: true, reason: "/c: no", contentType: "image/png"),
        Case(name: "one file's name", download: .success(ok()), validation: .success(png),
             store: .failed(ImgWarmError.cache(path: "/c/x", reason: "name too long", errno: ENAMETOOLONG)), outcome: .failed,
             error: .disk, announce: true, fatal: false, reason: "/c/x: name too long", contentType: "image/png"),
        Case(name: "304 renewed", download: .notModified(DownloadResponse(status: 304, body: [], etag: "\"e\"")),
             store: .renewed(bytes: 77), outcome: .revalidated, fileExists: true, changes: ["succeeded"]),
        Case(name: "304, file gone", download: .notModified(DownloadResponse(status: 304, body: [])), store: .vanished,
             outcome: .failed, error: .httpStatus, announce: true, reason: "304 Not Modified but the cached file was removed meanwhile"),
        // Failures the same request meets again enter the failed list
        // (BlockRule); transient ones, TLS and local limits never.
        Case(name: "404", download: failure(.httpStatus, status: 404), outcome: .failed, error: .httpStatus, announce: true,
             changes: ["failed"], reason: "why httpStatus"),
        // An error response keeps its media type too.
        Case(name: "403 page", download: failure(.httpStatus, status: 403, contentType: portal), outcome: .failed,
             error: .httpStatus, announce: true, changes: ["failed"], reason: "why httpStatus", contentType: portal),
        Case(name: "too large, typed", download: failure(.tooLarge, status: 200, contentType: "image/png"), outcome: .failed,
             error: .tooLarge, announce: true, reason: "why tooLarge", contentType: "image/png"),
        Case(name: "503 after retries", download: failure(.httpStatus, status: 503, transient: true), outcome: .failed,
             error: .httpStatus, announce: true, reason: "why httpStatus"),
        Case(name: "timeout", download: failure(.timeout, transient: true), outcome: .failed, error: .timeout, announce: true,
             reason: "why timeout"),
        Case(name: "too large", download: failure(.tooLarge), outcome: .failed, error: .tooLarge, announce: true,
             reason: "why tooLarge"),
        // A certificate the machine does not trust (curl 60): --cacert fixes it.
        Case(name: "tls", download: failure(.tls), outcome: .failed, error: .tls, announce: true, reason: "why tls"),
        // Cancelled (SIGINT, or a fatal error elsewhere): skipped, silent.
        Case(name: "cancelled", download: failure(.cancelled, transient: true), outcome: .skipped, error: .cancelled,
             reason: "why cancelled"),
        Case(name: "cancelled mid-response", download: failure(.cancelled, status: 200, transient: true, contentType: "image/png"),
             outcome: .skipped, error: .cancelled, reason: "why cancelled"),
    ]

    @Test(arguments: cases) func finishes(_ c: Case) {
        let out = Finish.outcome(of: c.entry, download: c.download, validation: c.validation, store: c.store, now: 1_700_000_000)
        #expect(out.entry.outcome == c.outcome)
        #expect(out.entry.error == c.error)
        #expect(out.announce == c.announce)
        #expect(out.entry.fileExists == c.fileExists)
        #expect((out.fatal != nil) == c.fatal)
        #expect(out.reason == c.reason)
        #expect(out.response?.contentType == c.contentType)
        let kinds = out.changes.map { change -> String in
            switch change {
            case .failed(let f):
                #expect(f.url == Self.url && f.failedAt == 1_700_000_000 && f.errorClass == (c.error.name ?? ""))
                return "failed"
            case .succeeded(let url, let v):
                #expect(url == Self.url && v.key == Self.url)
                return "succeeded"
            }
        }
        #expect(kinds == c.changes)
    }

    @Test func downloadedEntriesCarryStatusAttemptsFormatImageAndResponse() {
        var response = Self.ok(300)
        response.contentType = "image/webp"
        response.vary = "Accept-Encoding, Accept"
        let out = Finish.outcome(of: Self.entry, download: .success(response), validation: .success(Self.png), store: .stored(path: "/c/x.png"), now: 0)
        #expect(out.entry.status == 200 && out.entry.attempts == 2 && out.entry.bytes == 300)
        #expect(out.entry.format == .png && out.entry.width == 65535)
        #expect(out.image == Self.png)  // exact dimensions for the report
        #expect(out.response == ResponseFacts(contentType: "image/webp", vary: "Accept"))
    }
}
