# Tests that boot the unikernel (tests/uk/run.sh; cases in tests/uk/cases/).
TEST_SUITES += uk=tests/uk/run.sh
