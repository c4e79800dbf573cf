// The memory store keeps the job objects themselves (no encoding), so it is not reopened.
import { runJobStoreContract } from '../contract.js';
import { runVerifyContract } from '../verify-contract.js';

runJobStoreContract({ name: 'memory', freshStoreOption: () => 'memory' });
runVerifyContract({ name: 'memory', freshStoreOption: () => 'memory' });
