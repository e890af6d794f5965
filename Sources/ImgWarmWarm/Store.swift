import ImgWarmSupport
import ImgWarmDownload
import ImgWarmCache
/// The write side of the cache as `warm` sees it: atomic writes under a
/// name, and the renewal a 304 asks for. Which names and dates an entry
/// gets is the cache layout's business (DiskCache and CacheEntryName); a
/// store only writes. A protocol so that tests can put faults in front of
/// the real thing.
public protocol CacheStore: AnyObject, Sendable {
    /// Writes `bytes` as the entry `name`: a reader (the app, another run,
    /// prune) sees the old file or the whole new one, never a part.
    /// `previous`: the path of the file the entry had, removed when the new
    /// name differs. Whatever is at the name is replaced, so the name holds
    /// `bytes` when this returns. `likelyNew`: the name was not looked up
    /// (a cache empty at the start) and is most likely free. Throws
    /// `ImgWarmError`. Returns the final path of the image bytes.
    func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, replacing previous: String?,
               likelyNew: Bool) throws -> String
    /// `store` with what the response said (Coil 3's metadata, flutter's
    /// eTag and validTill); the iOS layouts keep only the bytes.
    func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, replacing previous: String?,
               likelyNew: Bool, response: StoredResponse?) throws -> String
    /// A 304 kept the entry: renews its access time as the app's read does
    /// (`CacheBackend.hit`). Its size, nil when it is gone.
    func renew(_ name: CacheEntryName) -> Int64?
}

extension CacheStore {
    public func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, replacing previous: String?,
                      likelyNew: Bool, response: StoredResponse?) throws -> String {
        try store(bytes, as: name, replacing: previous, likelyNew: likelyNew)
    }
}

extension DiskCache: CacheStore {
    public func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, replacing previous: String?,
                      likelyNew: Bool) throws -> String {
        try backend.store(bytes, as: name, response: nil, replacing: previous, likelyNew: likelyNew)
    }

    public func store(_ bytes: UnsafeRawBufferPointer, as name: CacheEntryName, replacing previous: String?,
                      likelyNew: Bool, response: StoredResponse?) throws -> String {
        try backend.store(bytes, as: name, response: response, replacing: previous, likelyNew: likelyNew)
    }

    public func renew(_ name: CacheEntryName) -> Int64? {
        guard let entry = existingEntry(for: name) else { return nil }
        recordHit(name, entry: entry)
        return entry.size
    }
}

/// The budget gate in front of a store: with `--budget`, a new file is
/// written only when it fits, decided strictly in feed order.
final class GatedStore: Sendable {
    let store: CacheStore
    let gate: BudgetGate?

    init(store: CacheStore, gate: BudgetGate?) {
        self.store = store
        self.gate = gate
    }

    /// A place in feed order, taken when the entry is requested.
    func ticket() -> Int? { gate?.issue() }

    /// The entry stores nothing: later entries need not wait for it.
    func pass(_ ticket: Int?) {
        if let gate, let ticket { gate.decide(ticket, size: nil) { _ in } }
    }

    /// Writes `body` as the entry `lookup` found (replacing its file, if
    /// any) once every earlier ticket is decided and it fits. `then` may
    /// run on the thread that decides an earlier entry.
    func write(_ body: [UInt8], to lookup: CacheLookahead.Lookup, ticket: Int?, response: StoredResponse? = nil,
               then: @escaping (StoreResult) -> Void) {
        write(BodyBytes(memory: body, file: nil), to: lookup, ticket: ticket, response: response, then: then)
    }

    /// `write` of a body in memory or in its spill file (copied from the
    /// mapping into the entry's own file by the atomic writer, so every
    /// layout keeps one way of writing an entry).
    func write(_ body: BodyBytes, to lookup: CacheLookahead.Lookup, ticket: Int?, response: StoredResponse? = nil,
               then: @escaping (StoreResult) -> Void) {
        guard let gate, let ticket else { return then(writeNow(body, to: lookup, response: response)) }
        // Replacing a cached file (--refresh) is not new room.
        let allocated: UInt64? = lookup.existing == nil ? UInt64((body.count + 4095) / 4096 * 4096) : nil
        gate.decide(ticket, size: allocated) { [self] fits in
            then(fits ? writeNow(body, to: lookup, response: response) : .overBudget(limit: gate.limit))
        }
    }

    /// A 304: nothing new to store; the cached file's time is renewed.
    func renew(_ name: CacheEntryName, ticket: Int?) -> StoreResult {
        pass(ticket)
        return store.renew(name).map { .renewed(bytes: $0) } ?? .vanished
    }

    /// The write itself, at once: for an entry with no ticket (no budget
    /// gate), which has nothing to wait for.
    func writeNow(_ body: BodyBytes, to lookup: CacheLookahead.Lookup, response: StoredResponse?) -> StoreResult {
        do {
            let path = try body.withUnsafeBytes {
                try store.store($0, as: lookup.name, replacing: lookup.existing?.path, likelyNew: lookup.unchecked,
                                response: response)
            }
            return .stored(path: path)
        } catch let error as ImgWarmError {
            return .failed(error)
        } catch {
            return .failed(ImgWarmError.cache(path: lookup.name.storedName, reason: "\(error)"))
        }
    }
}
