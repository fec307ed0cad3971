## Counts the `vat_crowd:` errors printed while a test runs (Godot 4.5+ Logger; built from source
## so this file still parses on 4.4, where `available()` is false and counts stay -1).
## Not a test script (no test_ prefix): the crowd tests preload it.
extends RefCounted

const SOURCE := """
extends Logger
var _mutex := Mutex.new()
var lines: Array[String] = []

func _log_error(function: String, file: String, line: int, code: String, rationale: String,
		editor_notify: bool, error_type: int, script_backtraces: Array[ScriptBacktrace]) -> void:
	_mutex.lock()
	lines.append(code + " " + rationale)
	_mutex.unlock()

func take() -> Array[String]:
	_mutex.lock()
	var out := lines.duplicate()
	lines.clear()
	_mutex.unlock()
	return out
"""

var _logger: Object = null


func _init() -> void:
	if not ClassDB.class_exists("Logger"):
		return
	var script := GDScript.new()
	script.source_code = SOURCE
	if script.reload() == OK:
		_logger = script.new()
		OS.call("add_logger", _logger)


## Whether errors can be counted here.
func available() -> bool:
	return _logger != null


## The error lines logged since the last call (all of them, not only vat_crowd's).
func take() -> Array[String]:
	if _logger == null:
		return []
	return _logger.call("take")


## How many of the errors logged since the last call contain `part` (-1 when not available).
func count(part := "vat_crowd:") -> int:
	if _logger == null:
		return -1
	var n := 0
	for l: String in take():
		if l.contains(part):
			n += 1
	return n


func stop() -> void:
	if _logger != null:
		OS.call("remove_logger", _logger)
		_logger = null
