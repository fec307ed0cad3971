## Runs the test scripts of one folder and exits non-zero when any test fails.
##
##   godot [--headless] --path tests -s res://runner.gd -- --dir unit|render [--filter SUBSTR] [--test-timeout S]
##
## Every `res://DIR/**/test_*.gd` (a VatTest) runs; each `func test_*()` is one test, printed as
## `PASS dir/file.gd::test_x (12 ms)`, `FAIL ...: why` or `SKIP ...: why`, then one line
## `N passed, N failed[, N skipped]`. A script error raised while a test runs fails that test
## (Godot 4.5+; `cargo xtask test` also fails the run on any "SCRIPT ERROR" in the log).
extends SceneTree

const RENDER_SIZE := Vector2i(640, 480)
## Watches for script errors; a Logger subclass only compiles on Godot 4.5+, so it is built here.
const LOGGER_SOURCE := """
extends Logger
var _mutex := Mutex.new()
var _errors: Array[String] = []

func _log_error(function: String, file: String, line: int, code: String, rationale: String,
		editor_notify: bool, error_type: int, script_backtraces: Array[ScriptBacktrace]) -> void:
	if error_type != ERROR_TYPE_SCRIPT:
		return
	_mutex.lock()
	_errors.append("%s (%s:%d)" % [rationale if not rationale.is_empty() else code, file, line])
	_mutex.unlock()

func take() -> Array[String]:
	_mutex.lock()
	var e := _errors.duplicate()
	_errors.clear()
	_mutex.unlock()
	return e
"""

var _dir := "unit"
var _filter := ""
var _test_timeout_ms := 120000
var _passed := 0
var _failed := 0
var _skipped := 0
var _logger: Object = null
var _stuck := false


func _initialize() -> void:
	_main.call_deferred()


func _main() -> void:
	if not _parse_args():
		quit(2)
		return
	if ClassDB.class_exists("Logger"):
		var script := GDScript.new()
		script.source_code = LOGGER_SOURCE
		if script.reload() == OK:
			_logger = script.new()
			OS.call("add_logger", _logger)
	print("runner: %s tests on Godot %s, display %s" % [_dir, Engine.get_version_info().string,
		DisplayServer.get_name()])
	var files := _find_tests("res://" + _dir)
	files.sort()
	for path in files:
		await _run_file(path)
		if _stuck:
			break
	if _logger != null:
		OS.call("remove_logger", _logger)
		_logger = null
	var summary := "%d passed, %d failed" % [_passed, _failed]
	if _skipped > 0:
		summary += ", %d skipped" % _skipped
	print(summary)
	quit(1 if _failed > 0 else 0)


func _parse_args() -> bool:
	var args := OS.get_cmdline_user_args()
	var i := 0
	while i < args.size():
		var a := args[i]
		var v: String = args[i + 1] if i + 1 < args.size() else ""
		match a:
			"--dir":
				_dir = v
				i += 1
			"--filter":
				_filter = v
				i += 1
			"--test-timeout":
				_test_timeout_ms = int(v.to_float() * 1000.0)
				i += 1
			_:
				printerr("runner: unknown argument '%s'" % a)
				return false
		i += 1
	if not DirAccess.dir_exists_absolute("res://" + _dir):
		printerr("runner: no folder res://%s" % _dir)
		return false
	return true


func _find_tests(dir: String) -> PackedStringArray:
	var found := PackedStringArray()
	for f in DirAccess.get_files_at(dir):
		if f.begins_with("test_") and f.ends_with(".gd"):
			found.append(dir.path_join(f))
	for d in DirAccess.get_directories_at(dir):
		found.append_array(_find_tests(dir.path_join(d)))
	return found


func _run_file(path: String) -> void:
	var label := path.trim_prefix("res://")
	var methods := PackedStringArray()
	var script: Script = load(path) as Script
	if script == null or not script.can_instantiate():
		# With a filter, a broken script only counts when the filter names its file.
		if _matches(label):
			_report(label, "FAIL", "cannot load the script (parse error?)")
		_take_script_errors()
		return
	var each := PackedStringArray()
	for m in script.get_script_method_list():
		var name: String = m["name"]
		if name.begins_with("test_each_") and not each.has(name):
			each.append(name)
		elif name.begins_with("test_") and not methods.has(name):
			if _matches(label + "::" + name):
				methods.append(name)
	if methods.is_empty() and each.is_empty():
		return
	var inst: Object = script.new()
	if not inst is VatTest:
		_report(label, "FAIL", "does not extend VatTest")
		return
	var test: VatTest = inst
	# Parametrised tests: `test_each_X(case)` runs once per entry of `cases_X()`, as
	# "test_each_X[case]", each with its own timeout and fresh root.
	var calls := []
	for name in methods:
		calls.append([name, name, []])
	for name in each:
		var source := "cases_" + name.trim_prefix("test_each_")
		if not test.has_method(source):
			_report(label + "::" + name, "FAIL", "has no %s() listing its cases" % source)
			continue
		for case in test.call(source):
			var case_label := "%s[%s]" % [name, case]
			if _matches(label + "::" + case_label):
				calls.append([case_label, name, [case]])
	if calls.is_empty():
		return
	var suite := Node3D.new()
	suite.name = "Suite"
	root.add_child(suite)
	var setup_ok := true
	if test.has_method("before_all"):
		var why := await _call(test, "before_all", suite)
		if not why.is_empty():
			_report(label + "::before_all", "FAIL", why)
			setup_ok = false
	if setup_ok:
		for c in calls:
			if _stuck:
				break
			await _run_test(test, label + "::" + c[0], c[1], c[2])
	if test.has_method("after_all") and not _stuck:
		var why := await _call(test, "after_all", suite)
		if not why.is_empty():
			_report(label + "::after_all", "FAIL", why)
	if is_instance_valid(suite):
		suite.free()
	test = null
	inst = null
	await process_frame


## Whether a test label passes the --filter: it contains the filter, or one of its "|"-separated
## alternatives.
func _matches(label: String) -> bool:
	if _filter.is_empty():
		return true
	for alternative in _filter.split("|", false):
		if label.contains(alternative):
			return true
	return false


func _run_test(test: VatTest, label: String, method: String, args := []) -> void:
	if DisplayServer.get_name() != "headless":
		DisplayServer.window_set_size(RENDER_SIZE)
		root.size = RENDER_SIZE
	var container := Node3D.new()
	container.name = "Test"
	root.add_child(container)
	var t0 := Time.get_ticks_msec()
	var why := await _call(test, method, container, args)
	var ms := Time.get_ticks_msec() - t0
	if is_instance_valid(container):
		container.free()
	await process_frame
	if not why.is_empty():
		_report(label, "FAIL", why)
	elif not test._skip_reason.is_empty():
		_report(label, "SKIP", test._skip_reason)
	else:
		_report(label, "PASS", "(%d ms)" % ms)


## Calls `method` (a coroutine or not) with `container` as the test's root, under the per-test
## timeout. Returns why it failed ("" when it did not).
func _call(test: VatTest, method: String, container: Node3D, args := []) -> String:
	test.tree = self
	test.root = container
	test._reset()
	_take_script_errors()
	var state := {"done": false}
	var body := func() -> void:
		await test.callv(method, args)
		state["done"] = true
	body.call()
	var deadline := Time.get_ticks_msec() + _test_timeout_ms
	while not state["done"]:
		if Time.get_ticks_msec() > deadline:
			_stuck = true
			return "timed out after %d s (still waiting; the run stops here)" % (_test_timeout_ms / 1000)
		await process_frame
	var errors := _take_script_errors()
	var why := test._failure_text()
	if not errors.is_empty():
		var text := "SCRIPT ERROR: " + "; ".join(errors)
		why = text if why.is_empty() else text + "; " + why
	return why


func _take_script_errors() -> Array[String]:
	if _logger == null:
		return []
	return _logger.call("take")


func _report(label: String, verdict: String, detail: String) -> void:
	match verdict:
		"PASS":
			_passed += 1
			print("PASS %s %s" % [label, detail])
		"SKIP":
			_skipped += 1
			print("SKIP %s: %s" % [label, detail])
		_:
			_failed += 1
			print("FAIL %s: %s" % [label, detail])
