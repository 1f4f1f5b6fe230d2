import type { TestProject } from 'vitest/node';
import { installCairnProject, installHosts, packCairn } from './install.js';
import type { HostsSetup } from './session.js';

// vitest.hosts.config.ts's global setup: the host CLIs and cairn, installed once for every test file.
export default function setup(project: TestProject): void {
  const hosts: HostsSetup = { bin: installHosts(), installed: installCairnProject(packCairn()) };
  project.provide('hosts', hosts);
}
