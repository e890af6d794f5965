import Foundation
import ImgWarmSupport
import ImgWarmDecode
import ImgWarmReport

/// Results of every entry plus running totals, shared by the feeding
/// thread, the validation workers and the progress printer.
// @unchecked Sendable: every mutable field only under `lock`.
public final class RunLedger: RunTotals, @unchecked Sendable {
    private let lock = NSLock()
    private var results: [EntryResult]
    /// One-line reasons of failures, by entry index.
    private var reasons: [Int: String] = [:]
    /// Where an entry's image is, for the entries whose path is not the
    /// one `DiskCache.path(for:)` plans (SDWebImage's bare-MD5 fallback
    /// found cached; every flutter file, named at the store): as the lookup
    /// found it or the store wrote it, so the report asks the cache nothing.
    private var paths: [Int: String] = [:]
    /// Entries per outcome and per error class (the totals of the summary).
    private var counts = [Int](repeating: 0, count: Outcome.allCases.count)
    private var errorCounts = [Int](repeating: 0, count: EntryError.allCases.count)
    public private(set) var bytesDownloaded: UInt64 = 0
    public private(set) var bytesTotal: UInt64 = 0
    public let total: Int
    public let startTime = Date()

    public init(entries: Int, problems: Int) {
        results = [EntryResult](repeating: EntryResult(), count: entries)
        total = entries + problems
        // Unusable lines count as failed entries from the start.
        counts[Int(Outcome.failed.rawValue)] = problems
        errorCounts[Int(EntryError.invalidURL.rawValue)] = problems
    }

    /// Exact dimensions of the rare images over 65535 pixels on a side.
    private var largeDimensions: [Int: (Int, Int)] = [:]
    /// Frame counts other than 1 (animations; 0: not known from a header).
    private var frameCounts: [Int: Int] = [:]
    /// Each entry's Content-Type as a code into `mediaTypes` (0: none,
    /// `overflowMedia`: in `rareMediaTypes`), plus the `Vary: Accept` bit:
    /// a byte per entry, since a run sees few distinct types.
    private var mediaCodes: [UInt8] = []
    private var mediaTypes: [String] = []
    private var mediaIndex: [String: UInt8] = [:]
    private var rareMediaTypes: [Int: String] = [:]
    private static let variesBit: UInt8 = 0x80
    private static let overflowMedia: UInt8 = 0x7F

    /// Records an entry's result; `image` (what validation learned) and
    /// `response` come with downloaded entries.
    public func record(_ index: Int, _ result: EntryResult, reason: String? = nil,
                       image: ImageInfo? = nil, response: ResponseFacts? = nil, path: String? = nil) {
        lock.lock()
        defer { lock.unlock() }
        if let path { paths[index] = path }
        if let w = image?.width, let h = image?.height, w > 65535 || h > 65535 { largeDimensions[index] = (w, h) }
        if let image, image.frames != 1 { frameCounts[index] = image.frames ?? 0 }
        if let response { recordMedia(index, response) }
        let old = results[index]
        if old.outcome != .pending {
            counts[Int(old.outcome.rawValue)] -= 1
            errorCounts[Int(old.error.rawValue)] -= 1
        }
        results[index] = result
        counts[Int(result.outcome.rawValue)] += 1
        errorCounts[Int(result.error.rawValue)] += 1
        if let reason { reasons[index] = reason }
        if result.outcome == .downloaded || result.outcome == .revalidated && result.bytes > 0 {
            bytesDownloaded += UInt64(result.bytes)
        }
        bytesTotal += UInt64(result.bytes)
    }

    public func result(_ index: Int) -> EntryResult {
        lock.lock()
        defer { lock.unlock() }
        return results[index]
    }

    /// Width and height of an entry's image, nil when unknown.
    public func dimensions(_ index: Int) -> (Int, Int)? {
        lock.lock()
        defer { lock.unlock() }
        if let d = largeDimensions[index] { return d }
        let r = results[index]
        return r.width == 0 && r.height == 0 ? nil : (Int(r.width), Int(r.height))
    }

    public func reason(_ index: Int) -> String? {
        lock.lock()
        defer { lock.unlock() }
        return reasons[index]
    }

    /// Frames of the entry's image: 1 unless recorded otherwise, nil when
    /// the entry has no image format or its header did not say.
    public func frames(_ index: Int) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard results[index].format != nil else { return nil }
        guard let n = frameCounts[index] else { return 1 }
        return n == 0 ? nil : n
    }

    /// The Content-Type and `Vary: Accept` of the entry's response.
    public func response(_ index: Int) -> ResponseFacts? {
        lock.lock()
        defer { lock.unlock() }
        guard index < mediaCodes.count, mediaCodes[index] != 0 else { return nil }
        let code = mediaCodes[index] & ~Self.variesBit
        var facts = ResponseFacts(contentType: nil, vary: nil)
        facts.variesOnAccept = mediaCodes[index] & Self.variesBit != 0
        if code == Self.overflowMedia {
            facts.contentType = rareMediaTypes[index]
        } else if code > 0 {
            facts.contentType = mediaTypes[Int(code) - 1]
        }
        return facts
    }

    /// Called with the lock held.
    private func recordMedia(_ index: Int, _ facts: ResponseFacts) {
        if mediaCodes.isEmpty { mediaCodes = [UInt8](repeating: 0, count: results.count) }
        var code: UInt8 = 0
        if let type = facts.contentType {
            if let known = mediaIndex[type] {
                code = known
            } else if mediaTypes.count + 1 < Int(Self.overflowMedia) {
                mediaTypes.append(type)
                code = UInt8(mediaTypes.count)
                mediaIndex[type] = code
            } else {
                code = Self.overflowMedia
                rareMediaTypes[index] = type
            }
        }
        mediaCodes[index] = code | (facts.variesOnAccept ? Self.variesBit : 0)
    }

    public typealias Snapshot = RunSnapshot

    public func snapshot() -> Snapshot {
        lock.lock()
        defer { lock.unlock() }
        var c: [Outcome: Int] = [:]
        for o in Outcome.allCases where o != .pending { c[o] = counts[Int(o.rawValue)] }
        var e: [EntryError: Int] = [:]
        for x in EntryError.allCases where x != .none && errorCounts[Int(x.rawValue)] > 0 { e[x] = errorCounts[Int(x.rawValue)] }
        return Snapshot(counts: c, errors: e, bytesDownloaded: bytesDownloaded, bytesTotal: bytesTotal,
                        total: total, elapsed: Date().timeIntervalSince(startTime))
    }

    /// The entry's image path when the run learned one other than the
    /// planned path (see `paths`); nil: the planned one.
    public func path(_ index: Int) -> String? {
        lock.lock()
        defer { lock.unlock() }
        return paths[index]
    }

}
