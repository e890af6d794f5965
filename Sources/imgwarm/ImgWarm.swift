import ArgumentParser
import ImgWarmKit
#if canImport(Glibc)
import Glibc
#endif

@main
struct ImgWarm: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "imgwarm",
        abstract: "Warm apps' image disk caches in batch: download, validate and store image URLs in an image library's own cache layout (--layout).",
        discussion: """
        Exit status: 0 success; 1 some entries failed (beyond --max-failures); \
        2 usage error or no usable input; 3 the cache cannot be used.
        """,
        version: ImgWarmVersion.string,
        subcommands: [WarmCommand.self, CacheCommand.self]
    )

    /// swift-argument-parser exits 64 on a usage error; imgwarm's contract
    /// says 2, so parsing errors are mapped here.
    static func main() {
        do {
            // `--header-for HOST HEADER` takes two arguments (RequestHeaderRules).
            // `-j8`: the number attached (WarmCommand.splitAttachedConcurrency).
            let args = WarmCommand.splitAttachedConcurrency(Array(CommandLine.arguments.dropFirst()))
            var command = try parseAsRoot(RequestHeaderRules.joiningHeaderForPairs(args))
            defer { ErrorOutput.restore() }
            try command.run()
        } catch let failure as Failure {
            printError(failure.message)
            Glibc.exit(failure.status)
        } catch let error as CacheError {
            printError(error.description)
            Glibc.exit(ExitStatus.cacheUnusable)
        } catch {
            let code = exitCode(for: error)
            if code == .success || error is CleanExit {
                self.exit(withError: error)
            }
            if code == .validationFailure {
                printError(message(for: error))
                Glibc.exit(ExitStatus.usage)
            }
            self.exit(withError: error)
        }
    }
}

/// An error that ends the command with a one-line message and a status.
struct Failure: Error {
    let message: String
    let status: Int32
    static func usage(_ m: String) -> Failure { Failure(message: m, status: ExitStatus.usage) }
    static func cache(_ m: String) -> Failure { Failure(message: m, status: ExitStatus.cacheUnusable) }
}

/// A message on stderr. Messages quote manifests, servers and file names:
/// escaped for the terminal here (`TerminalText`), whoever built them; line
/// breaks are kept (the argument parser's usage text has several lines;
/// manifest lines and header values cannot hold one).
func printError(_ message: String) {
    var line = message.split(separator: "\n", omittingEmptySubsequences: false)
        .map { TerminalText.escaped(String($0)) }.joined(separator: "\n")
    if !line.hasPrefix("imgwarm: ") && !line.hasPrefix("Error: ") && !line.hasPrefix("Usage") { line = "imgwarm: " + line }
    if !line.hasSuffix("\n") { line += "\n" }
    fputs(line, ErrorOutput.file)
}
