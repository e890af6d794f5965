import Foundation
import GRDB
import TestSupport


/// What a look at a cache folder found: the promise under test is that
/// every file under a cache name is exactly one of the images served.
struct CacheAudit {
    var whole = 0
    var problems: [String] = []
}

/// Checks every entry of `cache` (hidden state excluded) against `expected`
/// (cache file name → the bytes served for it): an unknown name, a short or
/// different file is a problem.
func auditCache(_ cache: String, expected: [String: [UInt8]]) -> CacheAudit {
    var audit = CacheAudit()
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? []).filter { !$0.hasPrefix(".") }
    for name in names {
        guard let want = expected[name] else {
            audit.problems.append("\(name): not a cache name of any served image")
            continue
        }
        // A concurrent remover may unlink the file between the listing and
        // the read: gone is fine, only a present file must be whole.
        guard let data = FileManager.default.contents(atPath: cache + "/" + name) else { continue }
        if [UInt8](data) == want {
            audit.whole += 1
        } else {
            audit.problems.append("\(name): \(data.count) bytes, expected the \(want.count) bytes served")
        }
    }
    return audit
}

/// Files in the cache's temp folder (`.imgwarm/tmp`).
func tempFiles(_ cache: String) -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: cache + "/.imgwarm/tmp")) ?? []
}

/// Cache file name (last path component of `cache path`) for each URL.
func cacheNames(_ f: WarmFixture, _ urls: [String]) throws -> [String] {
    try f.cachePaths(urls).map { ($0 as NSString).lastPathComponent }
}

/// Lines of text that contain a C0 control character or DEL other than the
/// line feed: what an attacker-written manifest could use to rewrite a
/// terminal (ANSI escapes) or forge log lines.
func linesWithControlCharacters(_ text: String) -> [String] {
    text.split(separator: "\n").map(String.init).filter { line in
        line.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }
    }
}

/// `PRAGMA integrity_check` of the SQLite file at `db`, run in-process with
/// GRDB (the library the state store uses): "ok", or SQLite's findings, or
/// the error that kept the file from opening. Never skipped: no external
/// `sqlite3` tool is involved.
func sqliteIntegrity(_ db: String) -> String {
    do {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: db, configuration: configuration)
        let rows = try queue.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") }
        return rows.joined(separator: "; ")
    } catch {
        return "cannot check \(db): \(error)"
    }
}

