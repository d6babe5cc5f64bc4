import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from './config';

const root = join(__dirname, '..', '..', '..');

describe('configuration', () => {
  it('starts from the documented defaults with an empty environment', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.modelApiKey).toBeUndefined();
    expect(config.queuePrefix).toBe('chronicle');
  });

  it('names every bad variable at once, with the value it got', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toMatch(/PORT must be a whole number \(got "eighty"\)/);
    expect(message).toMatch(/LOG_LEVEL must be one of debug, info, warn, error/);
    expect(message).toMatch(/DATABASE_URL must start with postgres: or postgresql:/);
  });

  it("refuses a job endpoint of its own without a key of its own (the narration's key stays home)", () => {
    expect(() =>
      loadConfig({ MODEL_API_KEY: 'k', SUMMARY_MODEL_BASE_URL: 'http://cheap.local/v1' }),
    ).toThrow(
      /SUMMARY_MODEL_API_KEY must be set when SUMMARY_MODEL_BASE_URL names another endpoint/,
    );
    const config = loadConfig({
      MODEL_API_KEY: 'k',
      SUMMARY_MODEL_BASE_URL: 'http://cheap.local/v1',
      SUMMARY_MODEL_API_KEY: 'local',
      SUMMARY_MODEL_NAME: 'llama3.2:3b',
    });
    expect(config.summaryModelBaseUrl).toBe('http://cheap.local/v1');
    expect(config.summaryModelName).toBe('llama3.2:3b');
    expect(config.memoryModelBaseUrl).toBeUndefined();
  });

  it('given an OTLP endpoint that is not an http(s) URL, when the config is loaded, then it is refused by name', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT/,
    );
    expect(loadConfig({}).otlpEndpoint).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).otlpEndpoint).toBe(
      'http://collector:4318',
    );
  });

  // One list of variables, two documents that must name every one of them.
  it.each(CONFIG_VARIABLES.map((spec) => spec.name))(
    '%s is in the README table and in docker-compose.yml',
    (name) => {
      const readme = readFileSync(join(root, 'README.md'), 'utf8');
      const compose = readFileSync(join(root, 'docker-compose.yml'), 'utf8');
      expect(readme).toContain(`| \`${name}\` |`);
      expect(compose).toMatch(new RegExp(`^\\s+${name}:`, 'm'));
    },
  );
});
