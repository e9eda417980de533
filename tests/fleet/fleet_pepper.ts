/** The pepper every fleet instance shares, and the test process that creates keys for them (a test value). */
export const FLEET_PEPPER = "fleet-test-pepper-0123456789abcdefghijklmnop";
