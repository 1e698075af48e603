// Kept equal to package.json's version (a test checks it).
export const version = '0.1.0';
