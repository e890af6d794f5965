import ArgumentParser
import Foundation
import ImgWarmKit

struct CacheFailedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "failed",
        abstract: "List (or clear) the failed-URL list: URLs skipped as `blocked` until --retry-failed.",
        discussion: """
        One line per URL: time, error class, HTTP status, URL (credentials, tokens and fragments masked), reason. \
        A URL with '@', '?' or '#' (credentials, a query, a fragment) is kept only as a digest ("digest_only" in \
        --json): warm --retry-failed retries it when a manifest still holds it.
        """
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
        } catch let error as ImgWarmError where error.errno == ENOENT && error.path == cache.directory {}
        guard FileManager.default.fileExists(atPath: StateStore.databasePath(for: cache)) else {
            if clear { print("removed 0 URLs from the failed-URL list") } else if json { print("[]") } else { sayEmpty(cache) }
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
        if failed.isEmpty && !json {
            sayEmpty(cache)
            return
        }
        if json {
            let rows: [[String: Any]] = failed.map { f in
                ["url": Redaction.url(f.displayURL), "key": Redaction.url(f.key), "error": f.errorClass,
                 "status": f.status as Any? ?? NSNull(), "reason": f.reason, "digest_only": f.isDigest,
                 "failed_at": formatter.string(from: Date(timeIntervalSince1970: f.failedAt))]
            }
            let data = try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        for f in failed {
            let status = f.status.map { " \($0)" } ?? ""
            print(TerminalText.escaped("\(formatter.string(from: Date(timeIntervalSince1970: f.failedAt))) \(f.errorClass)\(status) \(Redaction.url(f.displayURL)): \(f.reason)"))
        }
        let digests = failed.filter(\.isDigest).count
        printError("\(failed.count) failed URL\(failed.count == 1 ? "" : "s"); `imgwarm warm --retry-failed` fetches them again")
        if digests > 0 {
            printError("\(digests) of these URLs hold '@', '?' or '#' (where credentials, tokens and fragments go): the list keeps only their digest, "
                + "so imgwarm cannot fetch them from it; `warm --retry-failed` retries them from a manifest that still holds them")
        }
    }

    /// On standard error, so that standard output stays one line per URL
    /// for scripts.
    private func sayEmpty(_ cache: DiskCache) {
        printError(TerminalText.escaped("the failed-URL list of \(cache.directory) is empty: no URL is blocked"))
    }
}
