// Former bugs: every bug found in kvprefix so far, one line each, with the
// regression test that fails without its fix. A test named Suite.Name is a
// GoogleTest test of tests/; "ctest NAME" is a ctest test that runs a script
// (tests/CMakeLists.txt); "pytest NAME" is a test of python/tests/. Tests
// written for a bug that had none live in this file.
// FormerBugsTest.EveryListedTestExists keeps the table honest.
//
// To add one: fix the bug, write (or name) the test that fails without the
// fix, and add a line. A counterexample from a property or a fuzzer becomes
// a test here that replays its operations through
// checking::DifferentialChecker (tests/README.md).
//
// clang-format off
// Engines
//   double-array: on a slot conflict, moving only the new child (not its whole family) lost siblings; a bug known from double-array libraries, see optimized/double_array_trie.h -- DoubleArrayTrieTest.RelocationMovesEverySiblingAndFixesTheirChildren
//   double-array: a family spread over the vocabulary left a vocabulary-wide hole that was never filled (tree-of-thought: 614 bytes per node) -- DoubleArrayTrieTest.BranchingEveryStepDoesNotLeaveVocabularyWideHoles
//   double-array: its realloc-grown arrays advised for transparent huge pages were copied on every growth instead of moved by mremap (token replay of the synthetic trace: 1.06 million page faults, 3.9 s instead of 0.7 s) -- DoubleArrayTrieTest.GrowingTheArraysDoesNotFaultThemInAgain
//   double-array: a bounded cache reserved its leaf heap one entry larger on every insert, copying it whole each time: quadratic while leaves piled up in a cache not yet full (240,000 distinct requests with a capacity of 10^9: 72 s, radix 0.19 s; a 400,000-line trace with --capacity 200000: 184 s) -- GrowthTest.PilingUpLeavesAllocatesQuasiLinearBytes
//   hash: under a policy that stores whole requests (lfu) Insert returned the last matched node, not the new deepest one, when nothing was evicted (capacity 1, insert [65536]: 0 instead of 1) -- HashTrieTest.LfuStoresTheWholeRequestThenEvicts
//   PagedIndex built its engine without the model, so PagedIndex<RadixTrie> (and KVPREFIX_EXPORT_PLUGIN of it, once plugin ABI 2 gave plugins the model) answered SPEC §8 for model vllm or sglang, which RadixTrie refuses -- PagedIndexTest.AnEngineOverPagesRefusesTheModelsItDoesNotImplement, PluginModelTest.APluginRefusesTheModelsItDoesNotImplement
//   every engine's eviction loop assumed an evictable leaf exists: with none, the reference and radix read past the end of their leaf sets and the hash engine had only an assert (compiled out of release builds); now NoEvictableLeafError names the engine, the nodes and the capacity -- LeafHeapTest.AnEmptyHeapThrowsNoEvictableLeafError
// io and the CLI
//   an invalid UTF-8 namespace (a document's $.namespaces[i], a trace line's --namespace-field member) was reported by its byte alone ("byte 50: expected UTF-8 text ..."), naming no member; now the string's JSON location comes first -- NamespaceErrorTest.InvalidUtf8IsLocatedByMemberAndByte
//   a serving replay of a trace (`replay TRACE --max-running B`) read it in block mode whatever --mode said: --mode token answered for the blocks -- CliServeTest.TokenModeReplaysTokens
//   `replay TRACE --namespace-field F --kv-events FILE` wrote block events whose first tokens were namespace-folded symbols, exit 0 (documents with namespaces were refused) -- CliServeTest.KvEventsRefusesANamespaceField
//   a router plugin's crash or exit() ended replay and verify with its signal or status (exit(0) in create: verify exited 0 with no verdict) -- RouterPluginTest.ACrashOrAnExitIsReportedNamingThePlugin
//   a router table wrote a plugin's name unquoted: a name with a comma or a quote split its CSV row and broke its JSON line -- RouterPluginTest.ATableQuotesAPluginsName
//   `verify --engines radix hash` (an engine list written with a space) read "hash" as an input FILE and said only "File does not exist: hash" -- CliOptionsTest.AnEngineNameReadAsAFileSaysEnginesTakeAList
//   running verify's replay line (--cases FILE, --out FILE by default) rewrote a case that still failed as it was, replacing its source (where it came from) with "... on case FILE" -- VerifyCliTest.ReplayingACaseThatFailsAsItIsLeavesItAsItIs
//   two output options naming one file (`replay --matches x -o x`, `curve -o x --plot x`, also through a symbolic link or ./a/../x) wrote both, the second replacing the first, and exited 0: the match lines or the curve were silently lost -- CliOptionsTest.TwoOutputsNamingOneFileAreAUsageError
//   CLI11's usage errors quoted the bad value raw, so `--policy $'\e[2J'` cleared the terminal; a plugin's error text reached it raw too -- CliOptionsTest.ControlCharactersInMessagesAreEscaped
//   verify quoted the command's standard error raw in a crash report, and a --cmd holding a control character raw in its replay line -- VerifyCliTest.ReportEscapesControlCharacters
//   a trailing comma in an object said "expected a member name, ',' or '}', found '}'", a missing comma in an array "expected an integer ..., found '2'", a document cut after ':' "expected ',' or '}'" (testing/bad_inputs.h: TrailingCommaInObject, MissingComma, TruncatedAfterColon) -- BadInputTest.NamesTheLocationAndTheProblem
//   replay --help left out summary members it prints (model, match_limit, trigger, capacity_bytes) and convert --help offered replay documents convert does not read -- CliOptionsTest.HelpNamesWhatTheCommandsPrintAndRead
//   `--engine plugin:NAME` with the file NAME in the current folder said only "cannot open shared object file" (dlopen searches the library path for a name without '/') -- PluginTest.ANameWithoutSlashSaysHowToNameTheFileHere
//   a token-mode replay that ran out of memory aborted ("terminate called without an active exception", exit 134) when the first parse, on a reader thread, was libsimdjson's: its kernel is picked in a function-local static inside a noexcept function (replay of 600 lines under start-up + 8 MiB); the CLI now picks it before reading -- ResourceLimitTest.ReplayRunsOutOfMemoryCleanly
//   verify --engines all built every engine for every document, so the engines without vllm or sglang refused those documents and every one was skipped as refused options instead of checked -- VerifyCompareTest.AllEnginesFollowTheModel
//   -o over a symbolic link replaced the link with a file instead of writing the file it leads to -- WriteFileAtomicallyTest.WritesThroughSymlinksKeepingThem
//   -o /dev/stdout (a /proc/self/fd link) was replaced by a file instead of written in place -- WriteFileAtomicallyTest.WritesOpenFilesBehindProcLinksInPlace
//   a replaced -o file lost its permissions (the temporary file's 0600) -- WriteFileAtomicallyTest.ReplacedFileKeepsItsPermissions
//   SIGINT, SIGTERM or SIGHUP during a write left the temporary .name.XXXXXX file behind -- CliTest.SignalDuringTheWriteLeavesNoTemporaryFile
//   a closed stdout pipe (| head -c 10) killed the tool silently with SIGPIPE -- CliTest.ClosedStdoutPipeIsAnIoFailure
//   with stdout and stderr both closed (2>&1 | head -1) the report of the write error threw again and the tool aborted (status 134) -- CliTest.ClosedStdoutAndStderrIsStillAnIoFailure
//   an output past the file size limit (ulimit -f) killed the tool with SIGXFSZ, leaving the temporary .name.XXXXXX file -- CliTest.FileSizeLimitIsAWriteErrorAndLeavesNoTemporaryFile
//   SIGQUIT, SIGXCPU, SIGALRM, SIGUSR1, SIGUSR2, SIGVTALRM or SIGPROF during a write left the temporary .name.XXXXXX file behind -- CliTest.EverySignalThatEndsTheRunLeavesNoTemporaryFile
//   a size with 19 or more fraction digits (1.00000000000000000000GiB) was refused as not a size, and one with over 20 integer digits got that message instead of "2^64 bytes or more" -- CliOptionsTest.SizeIsExactForAnyNumberOfDigits
//   verify found an empty, folder or folderless --out only after the whole check and the shrinking, with the FAILED report printed -- VerifyCliTest.BadOutPathIsFoundBeforeAnyCheck
//   `replay --matches ''` read as no --matches: the summary alone was written and the tool exited 0; `-o ''` said "the output path is empty" without naming the option -- CliOptionsTest.EmptyOutputPathIsAUsageErrorNamingTheOption
//   io's atomic write installed SIGINT, SIGTERM and SIGHUP handlers in whatever program called it (library code changing process-wide state; the CLI's main owns the signals now) -- WriteFileAtomicallyTest.LeavesSignalHandlersAlone, WriteFileAtomicallyTest.RemoveTemporaryFileInFlightRemovesIt
//   -o into a missing folder (or under a file) said "cannot create a temporary file for: No such file or directory", naming no folder -- WriteFileAtomicallyTest.FailureToCreateTheTemporaryFileNamesTheFolder
//   `kvprefix convert trace.jsonl` (no `mooncake`) said "unknown command 'convert trace.jsonl'"; a command name holding a newline split the message in two lines -- CliOptionsTest.UnknownConvertCommandIsNamedAfterConvert
//   error messages quoted user text raw: newlines and terminal escapes reached the terminal -- ParseBatchInputTest.MessagesEscapeUserTextAndNameTheByte
//   invalid JSON in trace members kvprefix does not use was skipped unchecked by simdjson On Demand -- AppendTraceLineTest.InvalidJsonInUnusedMembersIsRejected
//   NaN, infinity and out-of-range values of floating-point options were cast into nonsense -- CliOptionsTest.CachedFractionMustBeAFiniteNumberFrom0To1, CliOptionsTest.VerifyDurationsMustBeFiniteAndInRange
//   a trace line whose unused member nested ~26,500 deep crashed replay, convert and verify --trace (recursive check), and nesting cost quadratic time and memory -- NestingTest.TraceLineWithDeepUnusedMemberIsRejectedQuickly, NestingCliTest.TraceCommandsRejectDeepUnusedMembers
//   locating the error of a truncated document nested 10^6 deep took quadratic time (a path of every open level) -- NestingTest.UnbalancedDeepDocumentsStopAtTheLimit, NestingCliTest.MatchAndVerifyRejectDeepInputs
//   --cached-fraction 0.29 of 100 requests cached 28: 0.29 * 100 is 28.999999999999996 in binary floating point -- CliOptionsTest.CachedFractionIsTheDecimalAsTyped
//   integer options took 0x10 as 16 and -1 as their maximum, capped overflow, and reported 1.5 with a misleading range -- CliOptionsTest.IntegerOptionsAreStrictDecimalsInRange
//   `kvprefix bogus` said "A subcommand is required" instead of naming bogus -- CliOptionsTest.UnknownCommandIsNamed
//   an invalid escape in a member name was reported at the value after the name; one in a string where a string was expected said "expected a string, found a string" -- EscapeErrorTest.PointsAtTheEscape
//   invalid UTF-8 outside strings (a stray 0xFF) was reported as trailing content, a bad token or an unbalanced document with simdjson's fallback kernel, as invalid UTF-8 with the others: the error depended on the CPU -- Utf8ErrorTest.IsTheSameWithEveryKernel
//   simdjson's allocation failure was reported as bad input (exit 2, "expected valid JSON, found Error allocating memory") -- ResourceLimitTest.MatchRunsOutOfMemoryCleanly, ResourceLimitTest.ReplayRunsOutOfMemoryCleanly, ResourceLimitTest.ConvertRunsOutOfMemoryCleanly
//   a trace that never ends a line (/dev/zero) grew the line buffer until memory ran out (16.8 GB) in replay, curve, convert and verify --trace -- CliTest.TraceReadersStopAtALineThatNeverEnds
//   verify, --help and --version exited 0 when standard output could not be written (a full disk, a closed stdout) -- CliTest.FullStdoutIsAnIoFailureForEveryCommand
//   curve --plot with a wrong suffix was an I/O failure (exit 1) found after the whole pass, and --capacities "" silently meant the default points -- CliTest.CurveMistakesAreReported
//   --capacity '' was taken as unbounded (overriding a replay document's capacity), and --capacity 05 was read as 5 while --page-size 05 was refused -- CliOptionsTest.EmptyOrMalformedCapacityIsAUsageError
//   replay --format requests converted a --capacity size with the command line's page size, not the document's: 4 pages where curve kept 2 -- CliOptionsTest.ReplayDocumentConvertsASizeWithItsPageSize
//   "capacity":-0 in a replay document was refused while a token -0 was taken as 0 -- CliOptionsTest.JsonMinusZeroIsZeroInEveryInteger
//   replay's summary refused -o ("--output does not apply to --format mooncake") and engines had no -o -- CliOptionsTest.EveryResultCanGoToAnOutputFile
//   curve --points N printed fewer than N lines when log-spaced capacities rounded to the same integer (--points 32 on the conversation trace: 31 lines), silently -- LruCurveTest.LogSpacedCapacitiesAreExactlyThePointsAskedFor, CliTest.CurvePointsAreExactlyNOrSayWhyFewer
//   curve's capacity_bytes wrapped around 2^128 for a large capacity, page size and --kv-bytes-per-token (printed 2^40 for 2^128 + 2^40 bytes) -- CliTest.CurveCapacityBytesPastTwoTo64AreNull
//   replay's summary computed capacity_bytes the same way and printed 2^40 for 2^130 bytes (--capacity 1152921503533105153 --kv-bytes-per-token 1099511627776 --page-size 1073741825) -- CliTest.ReplayCapacityBytesPastTwoTo64AreNull
//   curve --target-hit-ratio 1e-400 (4.9e-324, -1e-400) exited 1 with "kvprefix: stod" (std::stod's out_of_range escaped) -- CliTest.CurveTargetHitRatioOutOfDoubleRangeIsAUsageError
//   curve --target-hit-ratio took 00.5, +0.5, 0x1p-1 and ' 0.5', which --cached-fraction refuses, and rounded 1.0000000000000000000001 to 1 -- CliTest.CurveTargetHitRatioIsADecimalAsTyped
//   curve --plot x.png -o /dev/full (or -o nodir/a.json) failed but left x.png written -- CliTest.CurveWritesNeitherOutputWhenOneFails
//   curve's unreachable-target note said "(reached from 1 nodes on)" -- CliTest.CurveUnreachableNoteCountsOneNode
//   Python: curve(points=10**18) ran for years, holding no GIL and deaf to Ctrl-C; points=2**64 was a RuntimeError -- pytest test_curve_bad_arguments_raise
//   Python: match_file("a\0b") read the file "a" (a C string ends at the NUL) -- pytest test_match_file_rejects_a_path_with_a_null_byte
//   Python: a wrong type raised ValueError for model, match_limit and trigger (replay, curve, PrefixIndex, testing.check), curve's points and testing.check's counts and choices, RuntimeError for replay's engine, and testing.check took shrink="yes"; a negative max_shrink_attempts of check_document was a TypeError -- pytest test_every_argument_raises_type_error_for_a_type_value_error_for_a_value
//   Python: curve(capacities=[]) gave the default points, where the CLI's --capacities "" is an error -- pytest test_curve_with_no_capacities_raises
// verify
//   case files were read with nlohmann's get<Token>(), which converts: [[4294967297]] was sent as [[1]], true as 1 -- CaseFileTest.RejectsWhatTheProductRejectsNamingFileAndLocation
//   a case file member given twice was taken silently (nlohmann keeps the last one) -- CaseFileTest.RejectsWhatTheProductRejectsNamingFileAndLocation
//   a bad case file was named by its file name alone ("null" for --cases /dev/null) -- VerifyCliTest.BadCaseFileIsExit2NamingThePathAsGiven
//   a bad --trace was reported without its file name -- VerifyCliTest.BadTraceErrorNamesTheFile
//   an empty --cases folder silently fell back to generated inputs -- VerifyCliTest.EmptyCasesFolderIsExit2NotGeneratedInputs
//   --runs 0 without inputs, or a time budget spent before the first input, reported "OK" having checked nothing -- CliOptionsTest.VerifyNeverReportsSuccessWithoutChecking
//   a --timeout below a millisecond became 0 ms: every run timed out -- CliOptionsTest.VerifyDurationsMustBeFiniteAndInRange
//   --trace-window near SIZE_MAX wrapped around (begin + window) -- CliOptionsTest.TraceWindowAtLeastTheTraceIsOneInput
//   a background child holding stdout open turned a finished answer into a timeout and outlived the run -- SubprocessTest.BackgroundChildHoldingThePipeIsNotATimeout, VerifyCliTest.BackgroundChildOfTheCommandIsNoTimeout
//   verify::Run set SIGPIPE to ignored for the rest of the process, and RunSubprocess killed a caller whose SIGPIPE was at its default when the command stopped reading -- VerifyRunTest.LeavesSigpipeDispositionAlone, SubprocessTest.CommandThatStopsReadingLeavesSigpipeAlone
//   an answer nested deeper than 1024 was not-json without a location (simdjson's default DOM depth) -- NestingTest.DeepAnswerOfAnImplementationIsWrongShapeAtItsLocation
//   running out of memory while checking built-in engines was reported as the engines' crash, shrunk and written as a case -- ResourceLimitTest.VerifyRunsOutOfMemoryCleanly
//   --max-size shaped only long runs: sizes were the run index, so --runs 10 never went past size 9 -- InputsTest.GeneratorSizesSpanZeroToMaxSize, VerifyCliTest.FewRunsReachMaxSize
//   the replay case file verify writes was rejected by `kvprefix replay FILE --format requests` (unknown member "document") -- VerifyRequestsTest.NoTouchOnHitIsCaughtAndShrunk
//   verify/README.md called the 69-line prefix_cache.py "40-line" and the 119-line replay_cache.py "120-line" -- VerifyDocsTest.ReadmeLineCountsAreTheScripts
//   a failure whose case-file source held bytes that are not UTF-8 (a --cmd, a file name) made nlohmann's dump() throw: no case file was written -- FormerBugsTest.CaseFileSourceNeedNotBeUtf8, CaseFileTest.FormatReadsBackWithAnySource
//   `verify --engines plugin:PATH` died with a plugin that crashed (SIGSEGV, no case file) or hung (forever) -- PluginTest.VerifyReportsACrashingPluginWithItsShrunkInput, PluginTest.VerifyReportsAHangingPluginWithItsShrunkInput
//   an input the shrinker could not make smaller was reported "shrunk in 3 checks from 1 sequences (1 tokens) to 1 sequences (1 tokens)", by verify and by kvprefix.testing -- VerifyCliTest.MinimalFailingInputIsReportedNotShrunk, pytest test_a_minimal_failing_document_is_reported_not_shrunk
//   verify named a generated replay document "generated input 47 (--seed 1, size 47)" and kvprefix.testing the same document "generated replay document 47 (...)" -- InputsTest.GeneratedReplayDocumentsAreNamedAsInPython
//   verify's OK report classified a vllm or sglang document's requests with the spec trie: its matches past the match limit (full hits vllm cannot have), its evictions (a refused request evicted a node) and "inside an edge" of nodes the model has not; spec documents under all-but-last were classified by their uncapped match -- InputStatisticsTest.ModelDocumentsAreCountedByTheirModel
//   verify's failure report showed a vllm document's cache with the block pool's capped matches, so a pool holding the chain [0] read "holds 1 nodes on 0 paths {}" -- CacheStateTest.VllmChainsAreShownWhole
//   `replay --engine plugin:PATH` printed the plugin's table name as "engine" ("radix" for the radix plugin), as the built-in engine of that name -- PluginTest.ReplayNamesThePluginPluginColonItsName
//   verify --engines plugin:PATH built the plugin once with the default options (unbounded, lru, page size 1, model spec) to check that it loads, so a plugin refusing them (a block pool of model vllm only) was a usage error, exit 2, never checked -- PluginModelTest.VerifyPassesTheModelPluginsOnTheSharedModelCases
//   a plugin that called exit() (in its entry point, a constructor or a call such as match) ended the tool with status 0 and no output, a false success; the supervising process now names the call and exits 1 -- PluginTest.AnExitInsideThePluginIsAFailureNamingTheCall
//   a plugin's create that refused with a message filling the buffer without a NUL was read past the buffer (the stack printed after it) -- PluginTest.AnUnterminatedRefusalIsCutAtTheBuffer
//   curve --model sglang ended --points' capacities at the unbounded tree's node count, but its capacity counts pages (one 8-page edge: the curve stopped at capacity 1, hit ratio 0) -- CliModelsTest.CurvePointsOfSglangReachItsUnboundedPages
//   curve of a replay document accepted --mode and --vocab and ignored them (replay refuses them) -- CliModelsTest.CurveOfADocumentRefusesTraceOptions
//   KVPREFIX_FUZZ_ENGINES set but empty checked every built-in engine instead of being a usage error -- PluginModelTest.TheDifferentialFuzzerGivesAPluginTheModel
//   verify printed "OK: 0 inputs agree" and exited 0 when an engine refused the cache of every input (a plugin of ABI 1 on a vllm document), a success that checked nothing; now exit 2 naming the first refusal -- PluginModelTest.APluginBuiltForAbi1IsRefusedEveryModelButSpec
//   the differential fuzzer did the same with KVPREFIX_FUZZ_ENGINES=plugin:PATH (exit 2), and a plugin that could not load escaped as an uncaught PluginError (abort instead of exit 2) -- PluginModelTest.TheDifferentialFuzzerGivesAPluginTheModel
//   a plugin refused at load (another ABI version, a NULL required member) stayed dlopen'ed for the rest of the process -- PluginTest.ARefusedPluginIsUnloadedAndRefusedAgain
//   a plugin that crashed on several of match's threads at once cut the crash report short ("kvprefix: the plugin crashed (", about 4 runs in 10 on 16 threads: one-shot handlers gave the second fault the default action) -- PluginTest.CrashesOnManyThreadsAtOnceGiveOneWholeReport
//   verify --cases with a case whose expected answer is not the reference's printed a warning and exited 0, a success that checked the cache against a stale case -- VerifyCliTest.StaleExpectedAnswerIsBadInput
//   replay and curve of a document whose own match limit is all-but-last, with --model naming the document's model, ran the model's default match limit (all) instead of the document's -- CliModelsTest.FlagsOverrideTheDocumentsModel
//   a replay document's policy refused under --model (lfu under vllm) was reported as the user's "--policy", which was not given -- CliModelsTest.FlagsOverrideTheDocumentsModel
//   the fuzz targets' _replay programs ended a crash with the signal alone, not naming which of the corpus' inputs it was, and waited for ever on a hanging input -- PluginModelTest.TheFuzzReplayNamesTheInputOfACrashOrATimeout
//   a fuzz target's _replay program given a folder with a symlink loop (or an unreadable folder) ended in SIGABRT from an uncaught filesystem_error, like a crash of the target -- PluginModelTest.TheFuzzReplayReportsAnUnreadablePath
//   a plugin's _exit(0) in create made `replay DOC --input-format requests --engine plugin:PATH` exit 0 with empty stdout and stderr; its NULL dereference in match ended replay and match by SIGSEGV (139), a truncated library by SIGBUS (135) while loading, and a match that never returned hung them for good (no --timeout); now one line naming the call, exit 1, no output -- PluginTest.EveryCommandReportsAPluginsCrashExitOrHangInOneLine, PluginTest.TheToolReportsACrashInsideThePluginNamingTheCall
//   verify loaded a plugin in its own process before checking in a child, so a truncated library ended verify by SIGBUS (135) -- PluginTest.VerifyLoadsAPluginInAChildAndNamesAnExit
//   verify named a plugin's hang only "no answer within N ms (a plugin that hangs?)", and an exit in a call "exited with status N in the middle of a check" without the call -- PluginTest.VerifyReportsAHangingPluginWithItsShrunkInput, PluginTest.VerifyLoadsAPluginInAChildAndNamesAnExit
//   a plugin's name holding a newline split verify's one-line report (and replay's summary line) in two, and an escape sequence in it reached the terminal -- PluginTest.APluginsNameIsEscapedInReports
//   verify called an answer of 200,000 unclosed '[' "improper structure" (simdjson's TAPE_ERROR) instead of SPEC §6's "nested deeper than 1024", and matched_length 18446744073709551616 "not one JSON document" without $.matches[0].matched_length or the range -- OutputCheckTest.DepthFirstAndOutOfRangeNumbersByLocation, VerifyLinesTest.AnswersNestedTooDeepOrOutOfRangeArePlacedBySpec6
//   a fuzz target's _replay program given a FIFO with no writer blocked for ever under -timeout=N: the clock started after the read -- PluginModelTest.TheFuzzReplayReportsAnUnreadablePath
//   a plugin's _exit(0) in create made `replay DOC --input-format requests --engine plugin:PATH` exit 0 with empty stdout and stderr; its NULL dereference in match ended replay and match by SIGSEGV (139), a truncated library by SIGBUS (135) while loading, and a match that never returned hung them for good (no --timeout); now one line naming the call, exit 1, no output -- PluginTest.EveryCommandReportsAPluginsCrashExitOrHangInOneLine, PluginTest.TheToolReportsACrashInsideThePluginNamingTheCall
//   verify loaded a plugin in its own process before checking in a child, so a truncated library ended verify by SIGBUS (135) -- PluginTest.VerifyLoadsAPluginInAChildAndNamesAnExit
//   verify named a plugin's hang only "no answer within N ms (a plugin that hangs?)", and an exit in a call "exited with status N in the middle of a check" without the call -- PluginTest.VerifyReportsAHangingPluginWithItsShrunkInput, PluginTest.VerifyLoadsAPluginInAChildAndNamesAnExit
//   a plugin's name holding a newline split verify's one-line report (and replay's summary line) in two, and an escape sequence in it reached the terminal -- PluginTest.APluginsNameIsEscapedInReports
//   verify called an answer of 200,000 unclosed '[' "improper structure" (simdjson's TAPE_ERROR) instead of SPEC §6's "nested deeper than 1024", and matched_length 18446744073709551616 "not one JSON document" without $.matches[0].matched_length or the range -- OutputCheckTest.DepthFirstAndOutOfRangeNumbersByLocation, VerifyLinesTest.AnswersNestedTooDeepOrOutOfRangeArePlacedBySpec6
//   a stack overflow in a fuzz target's _replay program was not named ("replay: SIGSEGV on input FILE"): the small-stack thread had no signal stack, so the handler could not run -- ctest mooncake_line_fuzzer_teeth_seed_corpus
//   a replay document's member that a flag made invalid was dropped, not refused: {"requests":[[1,2],[1,2]],"match_limit":"all"} with `replay --input-format requests --model vllm` answered as all-but-last (exit 0), and "trigger" with --model spec or vllm was dropped (replay and curve), while "policy" was refused (SPEC §9.4 makes all errors) -- CliModelsTest.DocumentMembersAFlagMakesInvalidAreRefused
//   curve checked its flags alone before reading a replay document, so `--trigger on-allocate` with an sglang document was refused ("--trigger: a trigger needs model \"sglang\"; the model is \"spec\"") where replay took it -- CliModelsTest.CurveTakesATriggerForAnSglangDocument
//   a command checked by verify (--cmd, either protocol) had no way to refuse an input whose options its cache does not implement: whatever it answered was judged, a wrong answer or a crash; the refusal answer {"refused":"..."} is now a skip, counted after the OK line with the first reason -- VerifyRefusalTest.ACommandsRefusalIsASkipWithEitherProtocol, VerifyRefusalTest.RefusingEveryInputIsNoSuccess, VerifyRefusalTest.ParseRefusalReadsOnlyTheRefusalAnswer
//   verify generated every policy, page size, model and capacity, with no flag to generate only what a cache implements: a plugin of lru and fifo had a third of its documents skipped, one of lru and page size 1 81% -- VerifyRefusalTest.ImplementedOptionsGenerateOnlyThose, VerifyRefusalTest.ImplementedOptionsUsageErrors, PluginTest.VerifyGeneratesOnlyThePoliciesAPluginImplements
//   the differential fuzzer (checking::CheckFuzzInput) skipped the inputs a cache refuses without saying how many, and could not be told which options a cache implements -- FuzzInputTest.TallyCountsSkippedInputsAndImplementedOptionsAvoidThem, ImplementedOptionsTest.RestrictKeepsToTheListsAndChangesOnlyTheRest, PluginModelTest.TheDifferentialFuzzerSaysWhatItSkippedAndTakesOptions
//   verify --serving --cmd asked for §10.5's answer of a document written with every §10 default, which `kvprefix replay` answers with §5's matches, so the reference command itself failed there and shrinking hid other bugs behind "$: unknown member \"matches\""; the shared §10 cases (an "expected" of §10.5's shape, a "why") were refused by replay and verify --serving ("$.expected.requests: expected \"matches\""); an integer's place holding 0.5 or -1 was a wrong answer, 2^64 "expected a number" -- VerifyServingCliTest.SharedCasesAndSection8DocumentsAgree, CheckPrintedJsonAnswerTest.NamesTheFirstDifferenceByItsLocation
//   a serving plugin that implements only part of SPEC §10 had no way to refuse the rest: its admit's KVPREFIX_INVALID_ARGUMENT (a cache storing no output, given output "unique") ended replay as a plugin failure (exit 1) and verify --serving reported a crash; it is now a refusal naming the plugin, exit 2 in replay and a counted skip in verify -- PluginServingTest.AnAdmitRefusingTheOptionsIsARefusal
//   Python: kvprefix.testing's check of a document with namespaces (SPEC §8.1) gave the cache and the reference its requests without them, so the right answers were called wrong and a cache ignoring namespaces passed -- pytest test_check_document_folds_namespaces_for_cache_and_reference
//   Python: kvprefix.testing.check called make_cache's refusal of options it does not implement a crash (a plugin's refusal too: examples/plugin/check_with_python.py printed a false "caught: crash"), and took no list of the options a cache implements -- pytest test_a_refusal_is_a_skip_counted_with_its_reason, pytest test_implemented_options_generate_only_those
//   `verify --router` reported a routed document nothing could shrink as "shrunk in N checks from 2 requests (...) on 2 workers to 2 requests (...) on 2 workers" -- RouterPluginTest.VerifyCatchesShrinksAndWritesTheWrongExample
// Benchmark reports
//   a comparison with too few repetitions for the U test to reach p < 0.05 (3 against 3) reported "0 benchmarks changed" beside a +52% geometric mean -- ctest bench_report
//   node counts below 100,000 were printed with decimals (3,072.00), and the report showed the maintainer's absolute trace folder -- ctest bench_report
//   the comparison called the reference engine's rows the noise floor, "whose code did not change", when the reference had changed between the two commits; it now gives their change apart and the condition for reading it as noise -- ctest bench_report
//   the radix plugin exported its static libraries' functions, so every call between them went through the PLT: 25% over the compiled-in engine on block-mode replay -- PluginTest.RadixPluginExportsOnlyItsEntryPoint
// The test suite
//   every ctest run left 266 files and folders in /tmp: the parametrised CLI tests' folders were two levels deep (a '/' of the test's name) and only the inner one was removed, and verify's, the case-file, Mooncake and former-bugs tests' files were never removed; every test now writes into a testing/program_run.h ScratchDir under ctest's own $TMPDIR -- ctest tmpdir_left_empty
// Layering
//   the shipped CLI linked the test library: mutants, RapidCheck and nlohmann-json were in build/kvprefix -- ctest cli_symbols
//   includes pointed up: the core included every engine, verify/ included cli/ and testing/ -- ctest layering
//
// Bugs of other projects, kept as the shared regression cases
// (tests/data/cases/NN-*.json, whose "source" names the report): every engine
// answers each one exactly -- EngineTest.SharedCases,
// LibraryPathTest.SharedCasesMatchForEveryEngineChosenByName,
// CliTest.SharedCasesAreExactForEveryEngine, pytest test_regression_case_gives_expected_matches
//   01 sgl-project/sglang#154: recursive radix insert hit the recursion limit on a very long input
//   03 sgl-project/sglang#10637: a key that becomes empty must return an empty match early
//   05 sgl-project/mini-sglang#46: match_prefix overwrote the matched node with the root while walking up
//   07 armon/libart#24: the prefix check ignored bytes past the stored partial prefix and matched falsely
//   09 ai-dynamo/dynamo#7800: duplicate store events were counted as new blocks
//   11 takawitter/trie4j#35: common-prefix search indexed -1 when the query ran past a stored key
//   13 fragglet/c-algorithms#2: keys >= 128 crashed the trie (char sign used as child index)
//   15 rafaelkallis/adaptive-radix-tree#18: growing node_16 made a node_48 whose children could not be read
//   17 NVIDIA/Megatron-LM#4158: a polynomial rolling block hash collided
//   19 openvinotoolkit/openvino.genai#3722: a hash hit was trusted without checking the block's tokens
//   21 llm-d/llm-d-inference-sim#705: the hit count kept growing after the first missing block
//   23 LMCache/LMCache#5151: full hits at an exact chunk multiple restored the wrong context
//   25 pytries/marisa-trie#55: a one-character prefix of a stored key returned no match
//   27 TheAlgorithms/Python#11316: inserting a key that ends where two keys branch raised an error
//   29 openrewrite/rewrite#7878: a recursive adaptive radix tree overflowed the stack on a, aa, aaa, ...
//   31 Tessil/hat-trie#54: a uint16 index type broke the structure past 65535 entries
//   33 pytries/datrie#32: insertion got slower as the trie grew
//   35 luislavena/radix#22: lookup compared against the first child only and missed its sibling
//   37 plar/go-adaptive-radix-tree#1: keys inserted after longer keys sharing their prefix went missing
//   39 sgl-project/sglang#22367: a vocabulary boundary check used > where >= was needed
// clang-format on
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "io/case_file.h"
#include "testing/program_run.h"

namespace kvprefix {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The whole text of every file of `dir` (not its subfolders) ending in
// `extension`.
std::string ReadAll(const fs::path& dir, const std::string& extension) {
  std::string all;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == extension) all += ReadText(entry.path());
  }
  return all;
}

// The tests the table names: everything after " -- " on a table line, split
// at ", ".
std::set<std::string> ListedTests(const std::string& table) {
  std::set<std::string> tests;
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("// clang-format on", 0) == 0) break;
    const std::size_t arrow = line.find(" -- ");
    if (line.rfind("//", 0) != 0 || arrow == std::string::npos) continue;
    std::istringstream names(line.substr(arrow + 4));
    for (std::string name; std::getline(names, name, ',');) {
      tests.insert(name.substr(name.find_first_not_of(' ')));
    }
  }
  return tests;
}

TEST(FormerBugsTest, EveryListedTestExists) {
  const fs::path source = KVPREFIX_SOURCE_DIR;
  const std::set<std::string> listed =
      ListedTests(ReadText(source / "tests/former_bugs_test.cc"));
  ASSERT_GE(listed.size(), 20u);
  const std::string gtests = ReadAll(source / "tests", ".cc") +
                             ReadAll(source / "tests/property", ".cc") +
                             ReadAll(source / "tests/plugin", ".cc") +
                             ReadAll(source / "tests/router_plugin", ".cc");
  const std::string ctests = ReadText(source / "tests/CMakeLists.txt") +
                             ReadText(source / "fuzz/CMakeLists.txt");
  const std::string pytests = ReadAll(source / "python/tests", ".py");
  for (const std::string& test : listed) {
    bool found = false;
    if (test.rfind("ctest ", 0) == 0) {
      const std::string name = "add_test(NAME " + test.substr(6);
      found = ctests.find(name + " ") != std::string::npos ||
              ctests.find(name + "\n") != std::string::npos;
    } else if (test.rfind("pytest ", 0) == 0) {
      found = pytests.find("def " + test.substr(7) + "(") != std::string::npos;
    } else {
      const std::size_t dot = test.find('.');
      ASSERT_NE(dot, std::string::npos) << "not Suite.Name: " << test;
      const std::regex definition(
          "(TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P|RC_GTEST_PROP)\\(\\s*" +
          test.substr(0, dot) + ",\\s*" + test.substr(dot + 1) + "\\b");
      found = std::regex_search(gtests, definition);
    }
    EXPECT_TRUE(found) << "the former-bugs table names a missing test: "
                       << test;
  }
}

// The case file of a failure carries the command line in its "source"; a
// --cmd with a byte that is not UTF-8 made nlohmann's dump() throw, so the
// failure was reported without its case file. Now the byte becomes U+FFFD.
TEST(FormerBugsTest, CaseFileSourceNeedNotBeUtf8) {
  const test::ScratchDir dir;
  const std::string out = dir.Path("latin1.json");
  const std::string command = std::string(KVPREFIX_CLI) +
                              " verify --cmd 'false #caf\xe9' --runs 1 --out " +
                              out + " >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);  // the failure itself
  const CaseFile written = ReadCaseFile(out);
  EXPECT_THAT(written.source, ::testing::HasSubstr("caf\xEF\xBF\xBD"));
  EXPECT_THAT(written.source, ::testing::HasSubstr("crash"));
}

}  // namespace
}  // namespace kvprefix
