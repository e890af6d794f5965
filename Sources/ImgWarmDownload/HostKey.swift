import Foundation

/// A host key (`ParsedURL.hostKey`, `scheme://host:port`) with the small
/// number its `HostKeys` gave it. The engine's per-host tables are arrays
/// indexed by `id`: a request's admission and end looked the host up about
/// ten times, each hashing and comparing the key's text (callgrind: about
/// 5,000 instructions a file). Two keys are equal when their ids are, so
/// only keys of the same `HostKeys` may be compared.
struct HostKey: Hashable, Sendable, CustomStringConvertible {
    let id: Int
    let text: String

    static func == (a: HostKey, b: HostKey) -> Bool { a.id == b.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
    var description: String { text }
}

/// The host keys of one downloader, each text numbered once (0, 1, 2...)
/// on first sight; shared by its engine threads, so a host has the same
/// id on every thread and in `HostTraffic`. One lookup of the text per
/// new job.
final class HostKeys: @unchecked Sendable {  // `ids` only under `lock`
    private let lock = NSLock()
    private var ids: [String: Int] = [:]

    func intern(_ text: String) -> HostKey {
        lock.lock()
        defer { lock.unlock() }
        if let id = ids[text] { return HostKey(id: id, text: text) }
        let id = ids.count
        ids[text] = id
        return HostKey(id: id, text: text)
    }
}
