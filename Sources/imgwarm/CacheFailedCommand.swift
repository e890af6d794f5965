import ArgumentParser
import Foundation
import ImgWarmKit

struct CacheFailedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "failed",
        abstract: "List (or clear) the failed-URL list: URLs skipped as `blocked` until --retry-failed.",
        discussion: "One line per URL: time, error class, HTTP status, URL (credentials removed), reason."
    )

    @OptionGroup var cacheOptions: CacheOptions

    @Flag(help: "Empty the list, so every URL is tried again by the next warm.")
    var clear = false

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() throws {
        let cache = try cacheOptions.inspectedCache(missing: clear ? .fails : .isEmpty)
        // The state database is opened in `.imgwarm` only once that is
        // checked: a real folder of this user that nobody else may change.
        do {
            try cache.openExisting()
        } catch let error as CacheError where error.errno == ENOENT && error.path == cache.directory {}
        guard FileManager.default.fileExists(atPath: StateStore.databasePath(for: cache)) else {
            if clear { print("removed 0 URLs from the failed-URL list") } else if json { print("[]") }
            return
        }
        let state = try StateStore(cache: cache)
        if clear {
            let n = try state.clearFailed()
            print("removed \(n) URL\(n == 1 ? "" : "s") from the failed-URL list")
            return
        }
        let failed = try state.failedURLs()
        let formatter = ISO8601DateFormatter()
        if json {
            let rows: [[String: Any]] = failed.map { f in
                ["url": Redaction.url(f.url), "key": Redaction.url(f.key), "error": f.errorClass,
                 "status": f.status as Any? ?? NSNull(), "reason": f.reason,
                 "failed_at": formatter.string(from: Date(timeIntervalSince1970: f.failedAt))]
            }
            let data = try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        for f in failed {
            let status = f.status.map { " \($0)" } ?? ""
            print("\(formatter.string(from: Date(timeIntervalSince1970: f.failedAt))) \(f.errorClass)\(status) \(Redaction.url(f.url)): \(f.reason)")
        }
    }
}
