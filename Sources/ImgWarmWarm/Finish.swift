#if canImport(Glibc)
import Glibc
#endif
import ImgWarmSupport
import ImgWarmDecode
import ImgWarmDownload
import ImgWarmCache

/// What the store stage did with an entry's body (or, for a 304, its file).
public enum StoreResult: Sendable {
    /// Written atomically under the entry's name; the final path of its
    /// image bytes, as the backend wrote it (what the report shows).
    case stored(path: String)
    /// A 304 kept the cached file and renewed its time; its size.
    case renewed(bytes: Int64)
    /// A 304, but the cached file was removed meanwhile (a concurrent prune).
    case vanished
    /// `--budget`: the file would not fit; nothing written.
    case overBudget(limit: UInt64)
    /// The write failed; nothing under the entry's name changed.
    case failed(ImgWarmError)
}

/// The last stage of `warm`: turns what happened to an entry into its
/// outcome and the state changes it implies. Pure: the caller records the
/// result, applies the changes, prints the failure line and stops the run
/// when `fatal` is set. It alone decides which errors end the run.
public enum Finish {
    /// The entry as the coordinator carries it through the stages.
    public struct Entry: Sendable {
        public var url: String
        public var key: String
        /// The URL was on the failed-URL list when the run started.
        public var wasFailed: Bool
        /// A cached file was there before the request (`--refresh`).
        public var replacesFile: Bool
        public init(url: String, key: String, wasFailed: Bool = false, replacesFile: Bool = false) {
            self.url = url
            self.key = key
            self.wasFailed = wasFailed
            self.replacesFile = replacesFile
        }
    }

    public struct Result: Sendable {
        public var entry = EntryResult()
        /// The one-line reason of a failure, skip or cancellation.
        public var reason: String?
        /// Printed as a failure line (`URL: reason`) as it happens.
        public var announce = false
        /// What validation learned of a stored image (exact dimensions:
        /// the packed result saturates at 65535; frames).
        public var image: ImageInfo?
        /// What a response said of its body (Content-Type, Vary), whether
        /// the body was stored or not; of an error response, its Content-Type.
        public var response: ResponseFacts?
        public var changes: [StateStore.Change] = []
        /// A disk error that makes the cache unusable: the run stops.
        public var fatal: ImgWarmError?
    }

    /// The outcome of an entry that Triage settled without a request.
    /// Nil for `.fetch`, which only the later stages can finish.
    public static func triaged(_ decision: Triage.Decision) -> EntryResult? {
        var r = EntryResult()
        switch decision {
        case .cached(let bytes):
            r.outcome = .cached
            r.bytes = UInt32(clamping: bytes)
            r.fileExists = true
        case .blocked:
            r.outcome = .blocked
        case .skipped(let error):
            r.outcome = .skipped
            r.error = error
        case .wouldFetch(let revalidate):
            r.outcome = revalidate ? .wouldRevalidate : .wouldDownload
            r.fileExists = revalidate
        case .fetch:
            return nil
        }
        return r
    }

    /// `validation` is nil when nothing was validated (no body); `store`
    /// nil when nothing was stored or renewed. `now`: seconds since 1970,
    /// the time of a failed-list entry.
    public static func outcome(of entry: Entry, download: DownloadResult, validation: Swift.Result<ImageInfo, ValidationFailure>?,
                               store: StoreResult?, now: Double) -> Result {
        var out = Result()
        switch download {
        case .failure(let failure):
            out.entry.error = EntryError(failure.errorClass)
            out.entry.status = UInt16(clamping: failure.status ?? 0)
            out.entry.attempts = UInt8(clamping: failure.attempts)
            out.reason = failure.message
            if failure.errorClass == .cancelled {
                out.entry.outcome = .skipped
                return out
            }
            // An error response's media type (a WAF's or login page's
            // text/html) says as much as its status.
            if let type = failure.contentType { out.response = ResponseFacts(contentType: type, vary: nil) }
            out.entry.outcome = .failed
            out.announce = true
            // A body that could not be spilled to a full disk: the store
            // would meet the same disk, so the run stops as it would there.
            if let disk = failure.diskError, isFatal(disk) { out.fatal = disk }
            // Only failures the same request meets again enter the
            // failed-URL list (BlockRule).
            if BlockRule.remembers(errorClass: out.entry.error.name ?? "", status: failure.status) {
                out.changes.append(.failed(.init(url: entry.url, key: entry.key, errorClass: out.entry.error.name ?? "",
                                                 status: failure.status, reason: failure.message, failedAt: now)))
            }

        case .notModified(let response):
            out.entry.status = UInt16(clamping: response.status)
            out.entry.attempts = UInt8(clamping: response.attempts)
            guard case .renewed(let bytes) = store else {
                // The file went away between the lookup and the answer.
                out.entry.outcome = .failed
                out.entry.error = .httpStatus
                out.reason = "304 Not Modified but the cached file was removed meanwhile"
                out.announce = true
                return out
            }
            out.entry.outcome = .revalidated
            out.entry.fileExists = true
            out.entry.bytes = UInt32(clamping: bytes)
            out.changes += succeeded(entry, response)

        case .success(let response):
            out.entry.status = UInt16(clamping: response.status)
            out.entry.attempts = UInt8(clamping: response.attempts)
            out.entry.bytes = UInt32(clamping: response.bodyCount)
            // Whatever becomes of the body: a failed entry's Content-Type
            // is often what says why (text/html from a captive portal or a
            // login page), so the report keeps it for failures too.
            out.response = ResponseFacts(contentType: response.contentType, vary: response.vary)
            switch validation {
            case .failure(let why)? where why.kind != .invalid:
                // Failed (it is not cached), but never on the failed-URL
                // list: installing the library, or a larger
                // --decode-memory or --decode-timeout, is the fix, and the
                // next run must then fetch it.
                out.entry.outcome = .failed
                switch why.kind {
                case .noDecoder: out.entry.error = .noDecoder
                case .tooComplex: out.entry.error = .tooComplex
                case .overDecodeMemory, .invalid: out.entry.error = .tooLarge
                }
                out.reason = why.reason
                out.announce = true
                return out
            case .failure(let why)?:
                out.entry.outcome = .failed
                out.entry.error = .badImage
                out.reason = why.reason
                out.announce = true
                out.changes.append(.failed(.init(url: entry.url, key: entry.key, errorClass: EntryError.badImage.name ?? "",
                                                 status: response.status, reason: why.reason, failedAt: now)))
                return out
            case .success(let info)?:
                out.entry.format = info.format
                out.entry.width = UInt32(clamping: info.width ?? 0)
                out.entry.height = UInt32(clamping: info.height ?? 0)
            case nil:
                break
            }
            switch store {
            case .stored?:
                out.entry.outcome = .downloaded
                out.entry.fileExists = true
                if case .success(let info)? = validation { out.image = info }
                out.changes += succeeded(entry, response)
            case .overBudget(let limit)?:
                out.entry.outcome = .skipped
                out.entry.error = .budget
                out.reason = "would pass the budget of \(limit) bytes"
            case .failed(let error)?:
                out.entry.outcome = .failed
                out.entry.error = .disk
                out.reason = error.description
                out.announce = true
                if isFatal(error) { out.fatal = error }
            case .renewed?, .vanished?, nil:
                // A 200 is stored or refused; anything else is a caller's bug.
                out.entry.outcome = .failed
                out.entry.error = .disk
                out.reason = "internal error: a downloaded body was neither stored nor refused"
                out.announce = true
            }
        }
        return out
    }

    /// Errors after which no later write can succeed: a full disk, a
    /// read-only or forbidden cache folder. Others (one file's name, a
    /// concurrent clean-up) fail the entry only.
    static func isFatal(_ error: ImgWarmError) -> Bool {
        error.isDiskFull || error.errno == EROFS || error.errno == EACCES
    }

    /// Only the state writes a success needs: most downloads are new,
    /// never failed, and carry no validators, so they write nothing.
    static func succeeded(_ entry: Entry, _ response: DownloadResponse) -> [StateStore.Change] {
        let validators = StateStore.Validators(key: entry.key, etag: response.etag, lastModified: response.lastModified)
        let hasValidators = validators.etag != nil || validators.lastModified != nil
        guard entry.wasFailed || hasValidators || entry.replacesFile else { return [] }
        return [.succeeded(url: entry.url, validators: validators)]
    }
}
