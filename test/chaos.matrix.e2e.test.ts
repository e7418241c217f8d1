import { defineChaosSuite } from './chaos/suite';

defineChaosSuite('matrix');
