use super::*;
use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Helpers whose jobs start only when the test says: none has started while the loop runs.
#[derive(Default)]
struct Late {
    jobs: Mutex<Vec<Box<dyn FnOnce() + Send>>>,
    threads: usize,
}

impl Helpers for Late {
    fn threads(&self) -> usize {
        self.threads
    }

    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>) {
        self.jobs.lock().unwrap().push(job);
    }
}

/// Helpers on their own threads, each started at once.
struct Threads(usize);

impl Helpers for Threads {
    fn threads(&self) -> usize {
        self.0
    }

    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>) {
        std::thread::spawn(job);
    }
}

fn runs_of(helpers: &dyn Helpers, count: usize) -> Vec<u32> {
    let runs: Vec<AtomicU32> = (0..count).map(|_| AtomicU32::new(0)).collect();
    for_each_helped(helpers, count, &|i| {
        runs[i].fetch_add(1, SeqCst);
    });
    runs.into_iter().map(AtomicU32::into_inner).collect()
}

#[test]
fn every_task_runs_once_with_any_helpers() {
    for count in [0, 1, 2, 7, 100, 1000] {
        let expect = vec![1; count];
        assert_eq!(
            runs_of(&RayonHelpers, count),
            expect,
            "rayon, {count} tasks"
        );
        assert_eq!(
            runs_of(&Threads(3), count),
            expect,
            "threads, {count} tasks"
        );
        assert_eq!(
            runs_of(&Late::default(), count),
            expect,
            "no helpers, {count} tasks"
        );
    }
}

#[test]
fn helpers_that_never_start_leave_the_caller_to_run_everything() {
    let late = Late {
        threads: 4,
        ..Late::default()
    };
    let caller = std::thread::current().id();
    let mut on_caller = 0;
    {
        let seen = Mutex::new(Vec::new());
        for_each_helped(&late, 50, &|i| {
            seen.lock().unwrap().push((i, std::thread::current().id()));
        });
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 50);
        on_caller += seen.iter().filter(|(_, t)| *t == caller).count();
    }
    assert_eq!(on_caller, 50, "every task ran on the caller");
    // The helpers start after the loop and its task are gone: they must not call it.
    let jobs = std::mem::take(&mut *late.jobs.lock().unwrap());
    assert_eq!(jobs.len(), 4, "one job per helper, at most count - 1");
    for job in jobs {
        job();
    }
}

#[test]
fn the_caller_waits_for_a_helper_inside_a_task() {
    // Two tasks: the caller's waits until the helper has taken the other, which takes 50 ms.
    // The loop must not return before the helper's task ends.
    let caller = std::thread::current().id();
    let helper_in = AtomicBool::new(false);
    let helper_done = AtomicBool::new(false);
    for_each_helped(&Threads(1), 2, &|_| {
        if std::thread::current().id() == caller {
            let t = std::time::Instant::now();
            while !helper_in.load(SeqCst) && t.elapsed() < Duration::from_secs(5) {
                std::thread::yield_now();
            }
        } else {
            helper_in.store(true, SeqCst);
            std::thread::sleep(Duration::from_millis(50));
            helper_done.store(true, SeqCst);
        }
    });
    assert!(helper_in.load(SeqCst), "the helper took a task");
    assert!(
        helper_done.load(SeqCst),
        "returned while the helper's task ran"
    );
}

#[test]
fn a_panicking_task_panics_the_caller_after_the_helpers_leave() {
    for helpers in [&Threads(3) as &dyn Helpers, &Late::default()] {
        let ran = AtomicU32::new(0);
        let result = catch_unwind(AssertUnwindSafe(|| {
            for_each_helped(helpers, 64, &|i| {
                ran.fetch_add(1, SeqCst);
                if i == 10 {
                    panic!("task 10 failed");
                }
            });
        }));
        let err = result.expect_err("the panic reaches the caller");
        let message = err.downcast_ref::<&str>().copied().unwrap_or_default();
        assert_eq!(message, "task 10 failed");
        assert!(ran.load(SeqCst) <= 64);
    }
}
