# The harness's own check (run by `cargo xtask test` in the unit tier, expecting exactly these
# verdicts): failures, script errors, skips and leaks must all be caught. Not a product test.
extends VatTest


func test_passes() -> void:
	check(true, "true is true")
	check_eq([1, 2], [1, 2], "arrays compare by value")


func test_fails_a_check() -> void:
	check_eq(1, 2, "deliberate failure")


func test_script_error() -> void:
	var nothing: Variant = null
	nothing.call("no_such_method")  # a runtime SCRIPT ERROR, deliberately


func test_fails_after_await() -> void:
	await frames(2)
	fail("deliberate failure after an await")


func test_skips() -> void:
	skip("deliberate skip")


func test_leaks_a_node() -> void:
	# Never freed: Godot must report "ObjectDB instances leaked at exit".
	Node.new()


func test_times_out() -> void:
	# Declared last: the runner reports the timeout (run with --test-timeout 2) and stops.
	await tree.create_timer(3600.0).timeout
