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
        2 usage error or no usable input; 3 the cache cannot be used; 4 imgwarm itself could not run.
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
        } catch let error as ImgWarmError {
            exit(with: error)
        } catch {
            let code = exitCode(for: error)
            if code == .success || error is CleanExit || error is ExitCode {
                self.exit(withError: error)
            }
            if code == .validationFailure {
                printError(message(for: error))
                Glibc.exit(ExitStatus.usage)
            }
            // Not the argument parser's and not imgwarm's own: still one
            // line, and never status 1, which says entries failed.
            exit(with: ImgWarmError(.unexpected(String(describing: error))))
        }
    }

    /// The one place an error becomes a message and an exit status.
    static func exit(with error: ImgWarmError) -> Never {
        printError(error.description)
        Glibc.exit(error.exitStatus)
    }
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
